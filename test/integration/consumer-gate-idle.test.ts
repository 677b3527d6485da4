import { afterAll, describe, expect, it } from "vitest";
import { createHeuristicGenerator } from "../../src/adapters/llm/heuristic-generator.js";
import type { ReflectionGenerator } from "../../src/pipeline/ports.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import { waitFor } from "../support/wait-for.js";

let h: Harness | undefined;

afterAll(async () => {
  await h?.close();
});

describe("events waiting behind the signature gate", () => {
  it("wait without spinning while the first event of their signature is being reflected on", async () => {
    const inner = createHeuristicGenerator();
    const callers = new Set<string>();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const blocking: ReflectionGenerator = {
      name: inner.name,
      async generate(request) {
        callers.add(request.event.eventId);
        await held; // a slow LLM: the first event of the signature holds the gate
        return inner.generate(request);
      },
    };
    h = await startHarness({
      startApp: false,
      env: { TOPIC_PARTITIONS: "1", CONSUMER_MAX_IN_FLIGHT: "16" },
    });
    const harness = h;
    const tenantId = `gate-${String(Date.now())}`;
    // One signature, separate loop families: all runnable, all but the first held by the gate.
    const events = Array.from({ length: 12 }, (_, i) =>
      taskEvent({ tenantId, loopId: `gate-loop-${String(i)}` }),
    );
    // Published before the processor starts, so they arrive in one batch.
    for (const event of events) await harness.publish(event);
    await harness.startApp({ generator: blocking });
    await waitFor(() => (callers.size === 1 ? true : undefined), {
      timeoutMs: 30_000,
      what: "first generation",
    });

    // While the first event is held, the process should be idle. A busy loop (take a slot, find
    // nothing startable, give it back, wake every batch, repeat) burns a whole core here.
    const before = process.cpuUsage();
    const wallStart = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const used = process.cpuUsage(before);
    const cpuShare = (used.user + used.system) / 1000 / (performance.now() - wallStart);
    release();

    for (const event of events) await harness.waitForOutputs(event.eventId, 2, 60_000);
    expect(callers.size).toBe(1); // the gate held: one event generated for the signature
    expect(cpuShare, `CPU share while waiting: ${cpuShare.toFixed(2)}`).toBeLessThan(0.25);
  });
});
