import kafkajs from "kafkajs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";

const { ConfigResourceTypes } = kafkajs;
const dlqLimitBytes = 200_000;

/**
 * Records near and over the size limits, several at once in one partition: the DLQ here accepts
 * at most 200 kB per record batch (`max.message.bytes`), the input topic the broker's 1 MB.
 */
describe("record sizes on the write path", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness({ startApp: false });
    const admin = h.kafka.admin();
    await admin.connect();
    await admin.alterConfigs({
      validateOnly: false,
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: h.config.topics.deadLetter,
          configEntries: [{ name: "max.message.bytes", value: String(dlqLimitBytes) }],
        },
      ],
    });
    await admin.disconnect();
    await h.startApp();
  }, 120_000);

  afterAll(async () => {
    await h.close();
  });

  it("dead-letters big bad records in pieces, a too-big one by reference, and keeps consuming", async () => {
    const big = (n: number) => `not json ${"x".repeat(n)}`;
    // One partition (key "raw"): three records that fit the DLQ alone but not together, one just
    // under the input topic's limit that the DLQ cannot hold, then an ordinary event.
    const fits = [150_000, 150_000, 150_000];
    const placed = [];
    for (const n of fits) placed.push(await h.publish(big(n)));
    const huge = await h.publish(big(1_040_000));
    const after = taskEvent({ tenantId: `t-${h.id}`, loopId: "raw" });
    await h.publish(after);

    await h.waitForOutputs(after.eventId, 2, 90_000);
    const dead = h.on(h.config.topics.deadLetter);
    expect(dead).toHaveLength(4);
    expect(new Set([...placed, huge].map((p) => p.partition)).size).toBe(1);
    for (const [i, letter] of dead.slice(0, 3).entries()) {
      expect(letter.headers["reflector.error.code"]).toBe("DECODE_FAILED");
      expect(letter.headers["reflector.original.offset"]).toBe(placed[i]?.offset);
      expect(letter.raw?.length).toBe((fits[i] ?? 0) + "not json ".length);
    }
    const omitted = dead[3];
    expect(omitted?.raw).toBeNull();
    expect(omitted?.headers["reflector.error.code"]).toBe("DECODE_FAILED");
    expect(omitted?.headers["reflector.value.omitted"]).toBe(
      `1040009 bytes over the dead-letter topic's size limit; read it at ${h.config.topics.taskCompleted}/${String(huge.partition)}/${huge.offset}`,
    );
    const ready = (await h.app.metrics.ready.get()).values[0]?.value;
    expect(ready).toBe(1);
  }, 120_000);
});
