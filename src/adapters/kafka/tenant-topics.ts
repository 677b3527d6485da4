import type { Admin } from "kafkajs";
import { matchesBinding, type TenantTopicBinding } from "../../domain/tenant-topic-binding.js";

/**
 * The cluster's topics that `TENANT_TOPIC_BINDING` covers, sorted. The consumer subscribes to these
 * names rather than to a RegExp: kafkajs matches a RegExp subscription against the cluster's
 * metadata once, at `subscribe`, and never again (a topic created later is not consumed until the
 * consumer subscribes anew), and the outage gate has to pause topics by name anyway.
 */
export async function boundTopics(admin: Pick<Admin, "listTopics">, binding: TenantTopicBinding) {
  const topics = await admin.listTopics();
  return topics.filter((topic) => binding.some((b) => matchesBinding(b, topic))).sort();
}

export interface BoundTopicWatchOptions {
  list: () => Promise<string[]>;
  /** The topics the consumer subscribed to. */
  subscribed: readonly string[];
  intervalMs: number;
  /** Bound topics that appeared since the subscription (the consumer must subscribe anew). */
  onNew: (topics: string[]) => void;
  onError: (err: unknown) => void;
}

/**
 * Looks for bound topics created after the consumer subscribed, every `intervalMs`; reports them
 * once. The processor answers by restarting (its crash path), which subscribes to them.
 */
export function watchBoundTopics(options: BoundTopicWatchOptions): { stop(): void } {
  const known = new Set(options.subscribed);
  let reported = false;
  let running = false;
  const timer = setInterval(() => {
    if (reported || running) return;
    running = true;
    options
      .list()
      .then((topics) => {
        const added = topics.filter((topic) => !known.has(topic));
        if (added.length > 0) {
          reported = true;
          options.onNew(added);
        }
      }, options.onError)
      .finally(() => {
        running = false;
      });
  }, options.intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
    },
  };
}
