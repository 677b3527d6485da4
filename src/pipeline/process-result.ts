import type { LoopDecision, Verdict } from "../domain/contracts/index.js";
import type { OutboundMessage } from "./ports.js";
import type { PersistedState } from "./processing-state.js";

/**
 * `replayed`: the record that committed the event id, delivered again (after a crash its outputs
 * may not have been published): the stored outputs go out again. `duplicate`: another record of
 * an event id already committed (a producer's retry, a DLQ replay): nothing is published.
 */
export type ProcessStatus = "processed" | "replayed" | "duplicate";

/** What processing one event returns to the consumer, which publishes `outputs`. */
export interface ProcessResult {
  status: ProcessStatus;
  outputs: OutboundMessage[];
  verdict: Verdict | null;
  decision: LoopDecision["decision"] | null;
  generatorCalls: number;
  /**
   * The outputs committed with the event id, whether or not this call publishes them (a
   * `duplicate` publishes none): what an HTTP caller is answered with.
   */
  committed: OutboundMessage[];
}

/** The result of an event this call committed. */
export function processedResult({ memory, result, loop }: PersistedState): ProcessResult {
  const { judged, rejudged, matched } = memory ?? {};
  return {
    status: "processed",
    outputs: result.outputs,
    verdict: judged?.verdict ?? rejudged?.verdict ?? matched?.known?.verdict ?? null,
    decision: loop.decision,
    generatorCalls: judged?.attempts ?? 0,
    committed: result.outputs,
  };
}

/**
 * The outputs to publish for an event id that is already committed: the stored ones for the
 * record that committed it (or when either record is unknown), none for any other record.
 */
export function alreadyCommitted(
  outputs: OutboundMessage[],
  committedBy: string | null | undefined,
  sourceRecord: string | null,
): ProcessResult {
  const same = sourceRecord === null || committedBy == null || committedBy === sourceRecord;
  return {
    status: same ? "replayed" : "duplicate",
    outputs: same ? outputs : [],
    verdict: null,
    decision: null,
    generatorCalls: 0,
    committed: outputs,
  };
}
