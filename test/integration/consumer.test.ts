import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { createHeuristicGenerator } from "../../src/adapters/llm/heuristic-generator.js";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import type { ReflectionGenerator } from "../../src/pipeline/ports.js";
import { cliEnv } from "../support/cli-env.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

const harnesses: Harness[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
});

/** Publishes events to one partition, in order, encoded like any producer would. */
async function publishToPartition(h: Harness, events: TaskCompleted[], partition = 0): Promise<void> {
  const producer = h.kafka.producer();
  await producer.connect();
  const messages = await Promise.all(
    events.map(async (event) => ({
      key: event.loopId,
      partition,
      value: await h.codec.encode(h.config.topics.taskCompleted, "task-completed.v1", event),
    })),
  );
  await producer.send({ topic: h.config.topics.taskCompleted, messages });
  await producer.disconnect();
}

/** A family of loops: `root`, then reruns `root_r1`, `root_r2`, … each naming its parent. */
function family(tenantId: string, root: string, size: number): TaskCompleted[] {
  return Array.from({ length: size }, (_, i) =>
    taskEvent({
      tenantId,
      loopId: i === 0 ? root : `${root}_r${String(i)}`,
      ...(i === 0 ? {} : { rerunOf: i === 1 ? root : `${root}_r${String(i - 1)}` }),
      // A distinct error per event, so every event needs its own reflection (a generator call).
      error: {
        category: "timeout_error",
        type: `query_timeout_${root}_${String(i)}`,
        code: "QUERY_TIMEOUT",
        message: `Query ${root}/${String(i)} exceeded its limit`,
        context: {},
      },
    }),
  );
}

describe("the consumer: concurrency inside a partition, ordered per loop family", () => {
  it("runs families at once on one partition and each family strictly in order", async () => {
    const inner = createHeuristicGenerator();
    const starts: { eventId: string }[] = [];
    let running = 0;
    let maxRunning = 0;
    const slow: ReflectionGenerator = {
      name: inner.name,
      async generate(request) {
        starts.push({ eventId: request.event.eventId });
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        try {
          await new Promise((resolve) => setTimeout(resolve, 150));
          return await inner.generate(request);
        } finally {
          running -= 1;
        }
      },
    };
    const h = await startHarness({
      overrides: { generator: slow },
      env: { CONSUMER_MAX_IN_FLIGHT: "32", CONSUMER_MAX_IN_FLIGHT_PER_PARTITION: "8" },
    });
    harnesses.push(h);
    const tenantId = `tenant-${h.id}`;
    const families = Array.from({ length: 6 }, (_, f) => family(tenantId, `fam${String(f)}-${h.id}`, 4));
    // Interleave the families on the partition: f0e0, f1e0, …, f0e1, f1e1, …
    const interleaved = families[0]?.flatMap((_, i) => families.map((fam) => fam[i])) ?? [];
    await publishToPartition(
      h,
      interleaved.filter((e): e is TaskCompleted => e !== undefined),
    );

    const decisions = await waitFor(
      () => {
        const found = h.on(h.config.topics.loopDecision, (c) => c.value?.tenantId === tenantId);
        return found.length >= 24 ? found : undefined;
      },
      { timeoutMs: 60_000, what: "24 loop decisions" },
    );
    expect(decisions).toHaveLength(24);
    // Different families ran at once (8 allowed per partition, 6 families ready at a time).
    expect(maxRunning).toBeGreaterThanOrEqual(4);
    // Within a family, each event started its reflection only after the previous one finished
    // processing: the first generator call of each event comes in family order.
    for (const fam of families) {
      const ids = fam.map((e) => e.eventId);
      const firstCalls = [...new Set(starts.map((s) => s.eventId).filter((id) => ids.includes(id)))];
      expect(firstCalls).toEqual(ids);
    }
    // The decisions of a family are published in family order too (one partition: the topic's order).
    for (const fam of families) {
      const ids = fam.map((e) => e.eventId);
      const order = decisions.map((d) => String(d.value?.sourceEventId)).filter((id) => ids.includes(id));
      expect(order).toEqual(ids);
    }
  });
});

const cli = fileURLToPath(new URL("../support/run-cli.ts", import.meta.url));

function startProcessor(env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", cli, "start"], {
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
}

describe("effectively-once across a crash", () => {
  it("after kill -9 mid-stream and a restart, read_committed consumers see every output exactly once", async () => {
    const h = await startHarness({ startApp: false });
    harnesses.push(h);
    const tenantId = `tenant-${h.id}`;
    const total = 400;
    const events = Array.from({ length: total }, (_, i) =>
      taskEvent({
        tenantId,
        loopId: `crash-${h.id}-${String(i)}`,
        error: {
          category: "timeout_error",
          type: `query_timeout_${String(i % 40)}`,
          code: "QUERY_TIMEOUT",
          message: `Query ${String(i % 40)} exceeded its limit`,
          context: {},
        },
      }),
    );
    for (let p = 0; p < h.config.topics.partitions; p += 1) {
      await publishToPartition(
        h,
        events.filter((_, i) => i % h.config.topics.partitions === p),
        p,
      );
    }
    // The same transactional id for both runs: the restarted process fences the killed one.
    // A short session timeout so the group notices the killed member quickly.
    const env = cliEnv(h.config, {
      KAFKA_TRANSACTIONAL_ID: `crash-${h.id}`,
      KAFKA_SESSION_TIMEOUT_MS: "6000",
    });
    const decisionsFor = () =>
      h
        .on(h.config.topics.loopDecision, (c) => c.value?.tenantId === tenantId)
        .map((c) => String(c.value?.sourceEventId));

    const first = startProcessor(env);
    const exited = new Promise((resolve) => first.once("exit", resolve));
    // Kill as soon as some outputs are committed: the rest of the stream is mid-flight.
    await waitFor(() => decisionsFor().length >= 20, { timeoutMs: 60_000, what: "first committed outputs" });
    first.kill("SIGKILL");
    await exited;
    const beforeRestart = decisionsFor().length;
    expect(beforeRestart).toBeLessThan(total);

    const second = startProcessor(env);
    try {
      await waitFor(() => decisionsFor().length >= total, {
        timeoutMs: 90_000,
        what: `${String(total)} decisions`,
      });
      // Let anything duplicated arrive before counting.
      const processedRows = await waitFor(async () => {
        const res = await h.pool.query<{ n: string }>(
          "SELECT count(*) AS n FROM processed_events WHERE tenant_id = $1",
          [tenantId],
        );
        const n = Number(res.rows[0]?.n ?? 0);
        return n >= total ? n : undefined;
      });
      expect(processedRows).toBe(total);
    } finally {
      const stopped = new Promise((resolve) => second.once("exit", resolve));
      second.kill("SIGTERM");
      await stopped;
    }
    const ids = decisionsFor();
    expect(new Set(ids).size).toBe(total);
    expect(ids).toHaveLength(total);
    const outcomes = [h.config.topics.reflectionAccepted, h.config.topics.reflectionRejected].flatMap(
      (topic) =>
        h.on(topic, (c) => c.value?.tenantId === tenantId).map((c) => String(c.value?.sourceEventId)),
    );
    expect(new Set(outcomes).size).toBe(outcomes.length);
  }, 180_000);
});
