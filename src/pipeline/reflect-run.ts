import type { TaskCompleted } from "../domain/contracts/index.js";
import type { OutboundMessage } from "./ports.js";
import type { TaskProcessor } from "./task-processor.js";

/**
 * One run reflected over HTTP (`POST /api/v1/reflect`), by the processor the Kafka consumer runs:
 * the same stages, judge, memory and stores, idempotent by the event id the same way (the
 * processed-events row). Only the Kafka side differs: there is no offset to commit, so the
 * outputs are published by a plain producer after the commit, like `loop-complete`'s decision.
 *
 * - first time: processed and committed, its outputs published;
 * - the same event id posted again: the outputs committed the first time are answered and
 *   published again with the same CloudEvents ids (the first call may have failed before the
 *   brokers acknowledged them; consumers drop the copy by id);
 * - an event id a Kafka record committed: its outputs are answered, nothing is published (the
 *   Kafka path published them in its transaction); and a Kafka record of an event id this path
 *   committed publishes nothing either (it is another record of the same event).
 */

/** The `sourceRecord` this path commits under, as a Kafka record commits under `topic/partition/offset`. */
export const httpSourceRecord = "http:reflect";

export interface ReflectRun {
  /** `processed` by this call, or `replayed`: committed before (over HTTP or from Kafka). */
  status: "processed" | "replayed";
  event: TaskCompleted;
  /** The outputs committed with the event id: the outcome (when reflected) and the decision. */
  outputs: OutboundMessage[];
}

export interface RunReflectorDeps {
  processor: Pick<TaskProcessor, "process">;
  /** Publishes outputs on their topics, as the Kafka path does. */
  publish(outputs: OutboundMessage[]): Promise<void>;
  /**
   * Counts what a run processed here published (verdicts, decisions, generator calls), as the
   * Kafka path counts its events' outputs once they are committed; not called for a replay.
   */
  counted?(outputs: readonly OutboundMessage[], generatorCalls: number): void;
}

export function createRunReflector(deps: RunReflectorDeps) {
  // A run posted again while the first is still being reflected joins it: one model call, one answer.
  const inFlight = new Map<string, Promise<ReflectRun>>();

  async function run(event: TaskCompleted): Promise<ReflectRun> {
    const result = await deps.processor.process(event, httpSourceRecord);
    if (result.outputs.length > 0) await deps.publish(result.outputs);
    if (result.status === "processed") deps.counted?.(result.outputs, result.generatorCalls);
    return {
      status: result.status === "processed" ? "processed" : "replayed",
      event,
      outputs: result.committed,
    };
  }

  return {
    /** Reflects the run (or answers its stored outcome); rejects with the pipeline's errors. */
    reflect(event: TaskCompleted): Promise<ReflectRun> {
      const key = `${event.tenantId}\u0000${event.eventId}`;
      const running = inFlight.get(key);
      if (running) return running;
      const started = run(event).finally(() => inFlight.delete(key));
      inFlight.set(key, started);
      return started;
    },
    /** Runs being reflected now (bounded by the route). */
    get inFlight(): number {
      return inFlight.size;
    },
  };
}

export type RunReflector = ReturnType<typeof createRunReflector>;
