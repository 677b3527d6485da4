import type { TopicMessages } from "kafkajs";
import type { TaskCompleted } from "../../domain/contracts/index.js";
import type { EventFacts } from "../../pipeline/processing-state.js";
import type { SourceRecord } from "./failure-records.js";

/** One consumed message as the scheduler holds it. */
export interface Work extends SourceRecord {
  /** Decoded up front to learn the ordering key; null when decoding must be (re)tried in the run. */
  event: TaskCompleted | null;
  /** What the processor derives from the event (`EventFacts`), once, when it is decoded. */
  facts?: EventFacts;
  /** Tenant + error signature, for the single-flight gate; null when unknown. */
  signature: string | null;
}

/** What a finished message contributes to the commit transaction. */
export interface Done {
  messages: TopicMessages[];
  afterCommit: () => void;
}

/** `topic/partition/offset`: the identity of one consumed record. */
export function recordRef(source: SourceRecord): string {
  return `${source.topic}/${String(source.partition)}/${source.message.offset}`;
}
