import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

/**
 * A tenant's share of the events in flight, on the real Kafka: tenant A floods the one input
 * partition ahead of tenant B with a share of 2, so most of A's events go unprocessed to the retry
 * topic and are processed from there. Nothing is lost or decided twice, B's events are processed
 * where they were read, and the input offsets are committed to the end.
 */
/** The tenant of every committed record on `topic`, read from its beginning. */
async function tenantsOn(h: Harness, topic: string): Promise<string[]> {
  const admin = h.kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const tenants: string[] = [];
  const last = new Map(ends.map((e) => [e.partition, BigInt(e.high) - 1n]));
  const reader = h.kafka.consumer({
    groupId: `reader-${h.id}-${String(Date.now())}`,
    readUncommitted: false,
  });
  await reader.connect();
  await reader.subscribe({ topics: [topic], fromBeginning: true });
  const done = new Set<number>();
  await reader.run({
    eachMessage: ({ partition, message }) => {
      const value = JSON.parse(message.value?.toString() ?? "{}") as { tenantId?: string };
      tenants.push(value.tenantId ?? "");
      // The last offset may be a transaction marker, never delivered: the one before it ends too.
      if (BigInt(message.offset) >= (last.get(partition) ?? 0n) - 1n) done.add(partition);
      return Promise.resolve();
    },
  });
  await waitFor(() => (ends.every((e) => e.high === "0" || done.has(e.partition)) ? true : undefined), {
    timeoutMs: 30_000,
    what: `the records of ${topic}`,
  });
  await reader.disconnect();
  return tenants;
}

describe("a tenant's share of the events in flight", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      startApp: false,
      env: { TOPIC_PARTITIONS: "1", CONSUMER_MAX_IN_FLIGHT_PER_TENANT: "2" },
    });
  }, 120_000);
  afterAll(async () => {
    await h.close();
  });

  it("hands a flooding tenant's backlog to the retry topic without losing or repeating an event, and commits to the end", async () => {
    const tenantA = `share-a-${h.id}`;
    const tenantB = `share-b-${h.id}`;
    const flood = Array.from({ length: 40 }, (_, i) =>
      taskEvent({ tenantId: tenantA, loopId: `a-${h.id}-${String(i)}` }),
    );
    const others = Array.from({ length: 3 }, (_, i) =>
      taskEvent({ tenantId: tenantB, loopId: `b-${h.id}-${String(i)}` }),
    );
    // Published before the processor starts: one batch, A's forty ahead of B's three.
    for (const event of [...flood, ...others]) await h.publish(event);
    await h.startApp();

    const all = [...flood, ...others];
    const decisions = () => h.on(h.config.topics.loopDecision);
    await waitFor(
      () =>
        all.every((e) => decisions().some((d) => d.value?.sourceEventId === e.eventId)) ? true : undefined,
      { timeoutMs: 120_000, what: "a decision for every event" },
    );
    // Exactly one decision each: none lost, none repeated by the hand-over.
    for (const event of all) {
      expect(decisions().filter((d) => d.value?.sourceEventId === event.eventId)).toHaveLength(1);
    }
    const rows = await h.pool.query<{ tenant_id: string; source_record: string }>(
      "SELECT tenant_id, source_record FROM processed_events WHERE tenant_id = ANY($1)",
      [[tenantA, tenantB]],
    );
    expect(rows.rows).toHaveLength(43);
    // A record back from the retry topic is processed as the record it was first read as, so the
    // rows name the input topic: the retry topic itself says which events went through it.
    const viaRetry = await tenantsOn(h, h.config.topics.retry);
    // A went over its share: most of its backlog was processed from the retry topic; B never was.
    expect(viaRetry.length).toBeGreaterThan(20);
    expect(viaRetry.every((tenant) => tenant === tenantA)).toBe(true);
    const deferred = (await h.app.metrics.registry.getSingleMetric("reflector_deferred_events_total")?.get())
      ?.values[0]?.value;
    expect(deferred).toBe(viaRetry.length);
    expect(rows.rows.every((r) => r.source_record.startsWith(`${h.config.topics.taskCompleted}/`))).toBe(
      true,
    );
    expect(h.on(h.config.topics.deadLetter)).toHaveLength(0);

    // Every input offset committed (the hand-overs with them), and every retry-topic record (that
    // topic is written in transactions: its last offset is a transaction marker, never delivered).
    const admin = h.kafka.admin();
    await admin.connect();
    try {
      const committedTo = async (topic: string, endsWithMarker: boolean) => {
        const [committed] = await admin.fetchOffsets({ groupId: h.config.kafka.groupId, topics: [topic] });
        const ends = await admin.fetchTopicOffsets(topic);
        return ends.every((end) => {
          const at = BigInt(committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? "-1");
          const high = BigInt(end.high);
          return high === 0n || at === high || (endsWithMarker && at === high - 1n);
        });
      };
      await waitFor(
        async () =>
          (await committedTo(h.config.topics.taskCompleted, false)) &&
          (await committedTo(h.config.topics.retry, true)),
        { timeoutMs: 30_000, what: "offsets committed to the end" },
      );
    } finally {
      await admin.disconnect();
    }
  }, 180_000);
});
