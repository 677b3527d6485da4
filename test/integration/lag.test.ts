import { afterAll, describe, expect, it } from "vitest";
import { createHeuristicGenerator } from "../../src/adapters/llm/heuristic-generator.js";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { createLogOffsetsReader } from "../../src/adapters/kafka/log-offsets.js";
import { readConsumerLag, type LagRow } from "../../src/adapters/kafka/admin/consumer-lag.js";
import { probeAgesSeconds } from "../../src/adapters/kafka/admin/lag-seconds.js";
import type { ReflectionGenerator } from "../../src/pipeline/ports.js";
import { cliEnv, kafkaConsumerGroups, parseDescribe, runReflector } from "../support/cli-env.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

const harnesses: Harness[] = [];
let release: () => void = () => undefined;
afterAll(async () => {
  release();
  for (const h of harnesses) await h.close();
});

/** Failing tasks with distinct errors: each needs its own reflection, i.e. a generator call. */
function events(h: Harness, label: string, count: number): TaskCompleted[] {
  return Array.from({ length: count }, (_, i) =>
    taskEvent({
      tenantId: `tenant-${h.id}`,
      loopId: `${label}-${h.id}-${String(i)}`,
      error: {
        category: "timeout_error",
        type: `query_timeout_${label}_${String(i)}`,
        code: "QUERY_TIMEOUT",
        message: `Query ${label}/${String(i)} exceeded its limit`,
        context: {},
      },
    }),
  );
}

async function publishTo(h: Harness, partition: number, batch: TaskCompleted[]): Promise<void> {
  const producer = h.kafka.producer();
  await producer.connect();
  const messages = await Promise.all(
    batch.map(async (event) => ({
      key: event.loopId,
      partition,
      value: await h.codec.encode(h.config.topics.taskCompleted, "task-completed.v1", event),
    })),
  );
  await producer.send({ topic: h.config.topics.taskCompleted, messages });
  await producer.disconnect();
}

/** `name{topic="…",partition="…"} value` lines of one metric, keyed `topic:partition`. */
function gauge(body: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  const pattern = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, "gm");
  for (const match of body.matchAll(pattern)) {
    const labels = Object.fromEntries(
      [...(match[1] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1] ?? "", m[2] ?? ""]),
    );
    out.set(`${labels.topic ?? ""}:${labels.partition ?? ""}`, Number(match[2]));
  }
  return out;
}

describe("consumer lag agrees with Kafka's kafka-consumer-groups --describe", () => {
  it("builds lag on purpose and reports the same offsets in `reflector lag --json`, /metrics and Kafka's tool", async () => {
    const h = await startHarness({ env: { LAG_REFRESH_MS: "0" } });
    harnesses.push(h);
    const partitions = h.config.topics.partitions;
    const topic = h.config.topics.taskCompleted;
    const group = h.config.kafka.groupId;
    const admin = h.kafka.admin();
    await admin.connect();
    const reader = createLogOffsetsReader(h.kafka);
    const lagNow = () =>
      readConsumerLag(admin, {
        logOffsets: (t) => reader.offsets(t),
        groupId: group,
        topics: [topic],
        fromBeginning: true,
      });

    // 1. Consumed and committed: 2 + p events on partition p.
    for (let p = 0; p < partitions; p += 1) await publishTo(h, p, events(h, `done${String(p)}`, 2 + p));
    await waitFor(
      async () => {
        const rows = await lagNow();
        return rows.every((r) => r.currentOffset === 2 + r.partition && r.lag === 0) && rows;
      },
      { timeoutMs: 90_000, what: "the first events committed" },
    );
    await h.stopApp();

    // 2. Lag on purpose: more events while a new instance is stuck on its first reflection, so it
    // holds its partitions (an active member for the tool to show) and commits nothing.
    const pendingSince = Date.now();
    for (let p = 0; p < partitions; p += 1) await publishTo(h, p, events(h, `lag${String(p)}`, 3 + 2 * p));
    const inner = createHeuristicGenerator();
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const stuck: ReflectionGenerator = {
      name: inner.name,
      async generate(request) {
        await gate;
        return inner.generate(request);
      },
    };
    const app = await h.startApp({ generator: stuck });
    const ours = await waitFor(
      async () => {
        const rows = await lagNow();
        return rows.every((r) => r.memberId !== null) && rows;
      },
      { timeoutMs: 60_000, what: "the group to assign every partition" },
    );
    for (const row of ours) expect(row.lag, `partition ${String(row.partition)}`).toBe(3 + 2 * row.partition);

    // 3. The three views of the same group, while nothing moves.
    const env = cliEnv(h.config);
    const cliRows = JSON.parse(await runReflector(["lag", "--json", "--topic", topic], env)) as LagRow[];
    await app.lagPoller.refresh();
    const metrics = (await app.http.inject({ method: "GET", url: "/metrics" })).body;
    const tool = parseDescribe(
      await kafkaConsumerGroups([
        "--bootstrap-server",
        h.config.kafka.brokers.join(","),
        "--describe",
        "--group",
        group,
      ]),
    ).filter((row) => row.topic === topic);
    const elapsedS = (Date.now() - pendingSince) / 1000;

    expect(tool).toHaveLength(partitions);
    expect(cliRows).toHaveLength(partitions);
    const committed = gauge(metrics, "reflector_consumer_committed_offset");
    const logEnd = gauge(metrics, "reflector_consumer_log_end_offset");
    const lag = gauge(metrics, "reflector_consumer_lag_messages");
    const lagSeconds = gauge(metrics, "reflector_consumer_lag_seconds");
    for (const t of tool) {
      const k = `${topic}:${String(t.partition)}`;
      const cli = cliRows.find((r) => r.partition === t.partition);
      expect(cli, k).toBeDefined();
      // Kafka's tool, the CLI and /metrics: the same three numbers per partition.
      expect(t.currentOffset, k).toBe(String(2 + t.partition));
      expect(t.lag, k).toBe(String(3 + 2 * t.partition));
      expect(String(cli?.currentOffset), k).toBe(t.currentOffset);
      expect(String(cli?.logEndOffset), k).toBe(t.logEndOffset);
      expect(String(cli?.lag), k).toBe(t.lag);
      expect(String(committed.get(k)), k).toBe(t.currentOffset);
      expect(String(logEnd.get(k)), k).toBe(t.logEndOffset);
      expect(String(lag.get(k)), k).toBe(t.lag);
      // The member columns come from the same group description.
      expect(cli?.memberId, k).toBe(t.consumerId);
      expect(cli?.clientId, k).toBe(t.clientId);
      expect(cli?.host, k).toBe(t.host);
      // The oldest pending message was published after `pendingSince`. The estimate interpolates
      // between two probes of the ladder, so it can be off by up to the probe that brackets it.
      const seconds = lagSeconds.get(k) ?? -1;
      const bracket = probeAgesSeconds.find((age) => age >= elapsedS) ?? Infinity;
      expect(seconds, k).toBeGreaterThan(0);
      expect(seconds, k).toBeLessThanOrEqual(bracket);
      expect(cli?.lagSeconds ?? -1, k).toBeGreaterThan(0);
    }

    // The table form carries the tool's columns, with LAG-SECONDS added.
    const table = await runReflector(["lag", "--topic", topic], env);
    expect(table.split("\n")[0]?.split(/\s+/)).toEqual([
      "GROUP",
      "TOPIC",
      "PARTITION",
      "CURRENT-OFFSET",
      "LOG-END-OFFSET",
      "LAG",
      "LAG-SECONDS",
      "CONSUMER-ID",
      "HOST",
      "CLIENT-ID",
    ]);

    // 4. Released, the instance catches up and the gauges say so.
    release();
    await waitFor(
      async () => {
        await app.lagPoller.refresh();
        const body = (await app.http.inject({ method: "GET", url: "/metrics" })).body;
        const now = gauge(body, "reflector_consumer_lag_messages");
        return [...Array(partitions).keys()].every((p) => now.get(`${topic}:${String(p)}`) === 0);
      },
      { timeoutMs: 90_000, what: "lag back to 0" },
    );
    await admin.disconnect();
    await reader.close();
  });

  it("uses the high watermark, as Kafka's tool does, also while a transaction is open", async () => {
    const h = harnesses[0];
    if (!h) throw new Error("first test did not start a harness");
    const topic = `${h.id}.open-transaction`;
    const group = `${h.id}.hw-check`;
    const { ensureTopics } = await import("../../src/adapters/kafka/topics.js");
    await ensureTopics(h.kafka, { names: [topic], partitions: 1, replicationFactor: 1 });
    const plain = h.kafka.producer();
    await plain.connect();
    await plain.send({ topic, messages: [{ value: "a" }, { value: "b" }] });
    await plain.disconnect();
    const admin = h.kafka.admin();
    await admin.connect();
    const reader = createLogOffsetsReader(h.kafka);
    await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: "1" }] });
    // Three records in a transaction left open: above the last stable offset (2), below the high watermark (5).
    const tx = h.kafka.producer({
      transactionalId: `${h.id}.open`,
      idempotent: true,
      maxInFlightRequests: 1,
    });
    await tx.connect();
    const transaction = await tx.transaction();
    try {
      await transaction.send({ topic, messages: [{ value: "c" }, { value: "d" }, { value: "e" }] });
      const [ours] = await readConsumerLag(admin, {
        logOffsets: (t) => reader.offsets(t),
        groupId: group,
        topics: [topic],
        fromBeginning: true,
      });
      // Why the log end is not read with kafkajs' admin client: it asks at READ_COMMITTED.
      const [lastStable] = await admin.fetchTopicOffsets(topic);
      expect(lastStable?.high).toBe("2");
      const [tool] = parseDescribe(
        await kafkaConsumerGroups([
          "--bootstrap-server",
          h.config.kafka.brokers.join(","),
          "--describe",
          "--group",
          group,
        ]),
      );
      expect(tool).toMatchObject({ currentOffset: "1", logEndOffset: "5", lag: "4" });
      expect(ours).toMatchObject({ currentOffset: 1, logEndOffset: 5, lag: 4 });
    } finally {
      await transaction.abort();
      await tx.disconnect();
      await admin.disconnect();
      await reader.close();
    }
  });

  it("counts a failed refresh and keeps the process up", async () => {
    const h = harnesses[0];
    if (!h) throw new Error("first test did not start a harness");
    const app = h.app;
    // An admin call on a topic that does not exist fails; the poller must swallow and count it.
    const { createLagPoller } = await import("../../src/adapters/kafka/admin/lag-poller.js");
    const { createLagMetrics } = await import("../../src/observability/lag-metrics.js");
    const { Registry } = await import("prom-client");
    const registry = new Registry();
    const metrics = createLagMetrics(registry);
    const reader = createLogOffsetsReader(h.kafka);
    const poller = createLagPoller({
      admin: h.kafka.admin(),
      logOffsets: (t) => reader.offsets(t),
      metrics,
      logger: (await import("../../src/observability/logger.js")).createLogger("silent"),
      intervalMs: 0,
      groupId: h.config.kafka.groupId,
      topics: [`missing-${h.id}`],
      fromBeginning: true,
    });
    await poller.refresh();
    await poller.stop();
    await reader.close();
    expect(
      (await registry.getSingleMetric("reflector_consumer_lag_refresh_errors_total")?.get())?.values[0]
        ?.value,
    ).toBe(1);
    // A failing lag refresh is no reason to leave the load balancer: readiness is unaffected.
    const ready = await app.http.inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      status: "ready",
      checks: { consumer: true, stopping: true, kafka: true, postgres: true, redis: true },
    });
    // Stopping: readiness goes first, before the consumer drains.
    const stopping = app.stop();
    const during = await app.http.inject({ method: "GET", url: "/readyz" }).catch(() => null);
    // Answered 503, or not at all once the server has closed: never ready.
    expect(during?.statusCode ?? 503).toBe(503);
    await stopping;
  });
});
