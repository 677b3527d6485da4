import { afterAll, describe, expect, it } from "vitest";
import { cliEnv, runReflector } from "../support/cli-env.js";
import { startHarness, type Harness } from "../support/harness.js";
import { waitFor } from "../support/wait-for.js";

const harnesses: Harness[] = [];
afterAll(async () => {
  for (const h of harnesses) await h.close();
});

const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("reflector dlq replay", () => {
  it("re-publishes dead letters with their original headers, commits, and replays nothing twice", async () => {
    const h = await startHarness();
    harnesses.push(h);
    const t = h.config.topics;
    const env = cliEnv(h.config);
    const admin = h.kafka.admin();
    await admin.connect();
    const replayGroup = `${h.config.kafka.groupId}.dlq-replay`;
    const endOf = async (topic: string) =>
      (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);

    // A message the consumer cannot decode lands in the DLQ with the reason.
    const original = await h.publish("{not json", {
      ce_id: `bad-${h.id}`,
      ce_type: "agent.task.completed",
      traceparent,
    });
    const [dead] = await waitFor(() => {
      const found = h.on(t.deadLetter, (c) => c.headers.ce_id === `bad-${h.id}`);
      return found.length > 0 && found;
    });
    expect(dead?.headers["reflector.error.code"]).toBe("DECODE_FAILED");
    await h.stopApp();
    // The feedback consumer shares the DLQ: its dead letters are not the task topic's to take back.
    const other = h.kafka.producer();
    await other.connect();
    await other.send({
      topic: t.deadLetter,
      messages: [
        {
          key: "fb",
          value: "{}",
          headers: {
            "reflector.error.code": "FEEDBACK_CONFLICT",
            "reflector.original.topic": `${h.id}.reflection.feedback`,
          },
        },
      ],
    });
    await other.disconnect();

    // --dry-run lists it and changes nothing.
    const inputBefore = await endOf(t.taskCompleted);
    const dry = await runReflector(["dlq", "replay", "--dry-run", "--idle-timeout-ms", "10000"], env);
    expect(dry).toContain(`would-replay  dlq:${String(dead?.partition)}:${String(dead?.offset)}`);
    expect(dry).toMatch(/would replay 1, skipped 1/);
    expect(dry).toMatch(/FEEDBACK_CONFLICT: would replay 0, skipped 1/);
    expect(dry).toMatch(/DECODE_FAILED: would replay 1, skipped 0/);
    expect(await endOf(t.taskCompleted)).toBe(inputBefore);
    const afterDry = await admin.fetchOffsets({ groupId: replayGroup, topics: [t.deadLetter] });
    expect(afterDry[0]?.partitions.every((p) => p.offset === "-1")).toBe(true);

    // The first run re-publishes it to the input topic and commits the DLQ up to its end.
    const first = await runReflector(["dlq", "replay", "--idle-timeout-ms", "10000"], env);
    expect(first).toMatch(/replayed 1, skipped 1/);
    expect(await endOf(t.taskCompleted)).toBe(inputBefore + 1);
    const dlqEnds = await admin.fetchTopicOffsets(t.deadLetter);
    const committed = await admin.fetchOffsets({ groupId: replayGroup, topics: [t.deadLetter] });
    const partitions = committed[0]?.partitions ?? [];
    expect(partitions.length).toBeGreaterThan(0);
    for (const p of partitions) {
      const end = Number(dlqEnds.find((e) => e.partition === p.partition)?.high ?? 0);
      // Committed up to the end, or to the transaction marker just before it (an empty partition: -1).
      expect(Number(p.offset)).toBeGreaterThanOrEqual(end - 1);
    }

    // The second run finds nothing left: the replay is idempotent.
    const second = await runReflector(["dlq", "replay", "--idle-timeout-ms", "10000"], env);
    expect(second).toMatch(/replayed 0, skipped 0/);
    expect(await endOf(t.taskCompleted)).toBe(inputBefore + 1);

    // The processor reads the replayed message; still undecodable, it is dead-lettered again,
    // carrying its original headers and the replay's record.
    await h.startApp();
    const again = await waitFor(() => {
      const found = h.on(t.deadLetter, (c) => c.headers.ce_id === `bad-${h.id}`);
      return found.length >= 2 && found;
    });
    const replayed = again.find((c) => c.offset !== dead?.offset || c.partition !== dead.partition);
    expect(replayed?.headers).toMatchObject({
      traceparent,
      ce_type: "agent.task.completed",
      "reflector.replayed.from": `dlq:${String(dead?.partition)}:${String(dead?.offset)}`,
      "reflector.replay.count": "1",
      "reflector.error.code": "DECODE_FAILED",
      "reflector.original.topic": t.taskCompleted,
    });
    // Dead-lettered again from its new place in the input topic, not the first one.
    expect(Number(replayed?.headers["reflector.original.offset"])).toBeGreaterThan(Number(original.offset));
    expect(replayed?.headers["reflector.original.partition"]).toBe(String(original.partition));
    expect(replayed?.raw?.toString()).toBe("{not json");
    expect(original.partition).toBe(dead?.partition);

    // A later replay takes the new dead letter only, and counts a second replay.
    await h.stopApp();
    const third = await runReflector(["dlq", "replay", "--idle-timeout-ms", "10000"], env);
    expect(third).toMatch(/replayed 1, skipped 0/);
    await h.startApp();
    const thrice = await waitFor(() => {
      const found = h.on(t.deadLetter, (c) => c.headers["reflector.replay.count"] === "2");
      return found.length > 0 && found;
    });
    expect(thrice).toHaveLength(1);
    await admin.disconnect();
  });

  it("--max replays at most N; the next run goes on where it stopped, with key, value and headers intact", async () => {
    const h = await startHarness({ startApp: false });
    harnesses.push(h);
    const t = h.config.topics;
    const env = cliEnv(h.config);
    const producer = h.kafka.producer();
    await producer.connect();
    await producer.send({
      topic: t.deadLetter,
      messages: [0, 1, 2].map((i) => ({
        key: `loop-${String(i)}`,
        partition: 0,
        value: `{"n":${String(i)}}`,
        headers: {
          ce_id: `evt-${String(i)}`,
          traceparent,
          "reflector.error.code": "SCHEMA_INVALID",
          "reflector.error.message": "task: Required",
          "reflector.original.topic": t.taskCompleted,
          "reflector.original.partition": "0",
          "reflector.original.offset": String(i),
        },
      })),
    });
    await producer.disconnect();

    expect(await runReflector(["dlq", "replay", "--max", "2", "--idle-timeout-ms", "10000"], env)).toMatch(
      /replayed 2, skipped 0/,
    );
    expect(await runReflector(["dlq", "replay", "--idle-timeout-ms", "10000"], env)).toMatch(
      /replayed 1, skipped 0/,
    );
    expect(await runReflector(["dlq", "replay", "--idle-timeout-ms", "10000"], env)).toMatch(
      /replayed 0, skipped 0/,
    );

    // What landed in the input topic: each message once, as it was, with the replay recorded.
    const seen: { key: string; value: string; headers: Record<string, string> }[] = [];
    const reader = h.kafka.consumer({ groupId: `reader-${h.id}` });
    await reader.connect();
    await reader.subscribe({ topics: [t.taskCompleted], fromBeginning: true });
    await reader.run({
      eachMessage: ({ message }) => {
        seen.push({
          key: message.key?.toString() ?? "",
          value: message.value?.toString() ?? "",
          headers: Object.fromEntries(
            Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(Array.isArray(v) ? v[0] : v)]),
          ),
        });
        return Promise.resolve();
      },
    });
    await waitFor(() => seen.length >= 3, { what: "the replayed messages" });
    await reader.disconnect();
    expect(seen.map((m) => [m.key, m.value]).sort()).toEqual([
      ["loop-0", '{"n":0}'],
      ["loop-1", '{"n":1}'],
      ["loop-2", '{"n":2}'],
    ]);
    for (const m of seen) {
      const i = m.key.slice("loop-".length);
      expect(m.headers).toEqual({
        ce_id: `evt-${i}`,
        traceparent,
        "reflector.replayed.from": `dlq:0:${i}`,
        "reflector.replay.count": "1",
      });
    }
  });
});
