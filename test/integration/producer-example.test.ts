import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoopDecisionV1 } from "../../src/domain/contracts/index.js";
import { startHarness, type Harness } from "../support/harness.js";

/**
 * examples/producers/typescript/producer.ts, as an agent author would run it, against the real
 * Kafka and a running processor (here with a schema registry, so the decision it reads is in the
 * Confluent wire format): it publishes one event and prints the decision Reflector made for it.
 */

const root = fileURLToPath(new URL("../../", import.meta.url));
const example = fileURLToPath(new URL("../../examples/producers/typescript/producer.ts", import.meta.url));
const run = promisify(execFile);

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ registry: true });
});

afterAll(async () => {
  await h.close();
});

describe("the TypeScript producer example", () => {
  it("publishes a valid agent.task.completed event and reads the loop.decision Reflector made for it", async () => {
    const tenantId = `example-${h.id}`;
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", example], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? "",
        KAFKA_BROKERS: h.config.kafka.brokers.join(","),
        TOPIC_TASK_COMPLETED: h.config.topics.taskCompleted,
        TOPIC_LOOP_DECISION: h.config.topics.loopDecision,
        TENANT_ID: tenantId,
        TIMEOUT_MS: "90000",
      },
      timeout: 110_000,
    });
    expect(stderr).toMatch(/published evt-[0-9a-f-]+ \(loop loop-[0-9a-f-]+\)/);
    const decision = LoopDecisionV1.parse(JSON.parse(stdout));
    expect(decision).toMatchObject({ tenantId, projectId: "orders", decision: "rerun", rerunCount: 1 });
    // The same decision Reflector published, for the event the example sent.
    const published = await h.waitForOutputs(decision.sourceEventId, 2);
    const onTopic = published.find((o) => o.topic === h.config.topics.loopDecision);
    expect(onTopic?.value).toEqual(decision);
    expect(onTopic?.raw?.[0], "Confluent wire format").toBe(0);
    expect(onTopic?.key).toBe(decision.loopId);
  });
});
