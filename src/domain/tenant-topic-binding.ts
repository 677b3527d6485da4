/**
 * Which tenant may publish on which input topic (`TENANT_TOPIC_BINDING`). A consumer cannot see
 * which principal produced a record, so the tenant an event claims is trusted only as far as the
 * topic it arrived on: each tenant gets its own topics (made writable only by its principal with
 * Kafka ACLs), and an event whose `tenantId` is not the topic's tenant is dead-lettered.
 *
 * Written `tenant=topic` or `tenant=prefix*`, comma-separated:
 * `acme=agents.acme.*,globex=agents.globex.task.completed`.
 */
export interface TopicBinding {
  tenantId: string;
  /** An exact topic name, or a prefix when `prefix` is true. */
  topic: string;
  prefix: boolean;
}

export type TenantTopicBinding = readonly TopicBinding[];

const topicChars = /^[A-Za-z0-9._-]{1,249}$/;

/**
 * Parses the setting; throws an Error listing every problem. A topic (or a prefix of it) bound to
 * two tenants is refused: a topic has exactly one tenant or none.
 */
export function parseTenantTopicBinding(text: string): TenantTopicBinding {
  const problems: string[] = [];
  const bindings: TopicBinding[] = [];
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry.length === 0) continue;
    const at = entry.indexOf("=");
    const tenantId = at < 0 ? "" : entry.slice(0, at).trim();
    const target = at < 0 ? "" : entry.slice(at + 1).trim();
    if (at < 0 || tenantId.length === 0 || target.length === 0) {
      problems.push(`"${entry}" is not tenant=topic or tenant=prefix*`);
      continue;
    }
    const prefix = target.endsWith("*");
    const topic = prefix ? target.slice(0, -1) : target;
    if (!topicChars.test(topic)) {
      problems.push(
        `"${target}" (tenant ${tenantId}): a topic name has letters, digits, '.', '_' and '-' only, with one '*' at the end for a prefix`,
      );
      continue;
    }
    bindings.push({ tenantId, topic, prefix });
  }
  for (const [i, a] of bindings.entries()) {
    for (const b of bindings.slice(i + 1)) {
      if (a.tenantId === b.tenantId) continue;
      if (overlaps(a, b)) {
        problems.push(`${describe(a)} and ${describe(b)} can both match one topic; a topic has one tenant`);
      }
    }
  }
  if (problems.length > 0) throw new Error(problems.join("; "));
  return bindings;
}

function describe(binding: TopicBinding): string {
  return `${binding.tenantId}=${binding.topic}${binding.prefix ? "*" : ""}`;
}

function overlaps(a: TopicBinding, b: TopicBinding): boolean {
  if (a.prefix && b.prefix) return a.topic.startsWith(b.topic) || b.topic.startsWith(a.topic);
  if (a.prefix) return b.topic.startsWith(a.topic);
  if (b.prefix) return a.topic.startsWith(b.topic);
  return a.topic === b.topic;
}

/** Whether the binding covers the topic. */
export function matchesBinding(binding: TopicBinding, topic: string): boolean {
  return binding.prefix ? topic.startsWith(binding.topic) : topic === binding.topic;
}

/** The tenant bound to the topic, or null when no binding covers it. */
export function tenantOfTopic(binding: TenantTopicBinding, topic: string): string | null {
  return binding.find((b) => matchesBinding(b, topic))?.tenantId ?? null;
}

/**
 * Why an event may not be processed under the binding, or null when it may: its tenant must be
 * the one bound to the topic it was published on.
 */
export function bindingViolation(
  binding: TenantTopicBinding,
  topic: string,
  tenantId: string,
): string | null {
  const bound = tenantOfTopic(binding, topic);
  if (bound === null) return `topic ${topic} is bound to no tenant (TENANT_TOPIC_BINDING)`;
  if (bound === tenantId) return null;
  return `tenantId ${JSON.stringify(tenantId)} arrived on topic ${topic}, which is bound to tenant ${JSON.stringify(bound)}`;
}
