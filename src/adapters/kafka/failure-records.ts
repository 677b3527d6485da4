import type { IHeaders, KafkaMessage, Message } from "kafkajs";
import type { FailureCode } from "./failure-policy.js";
import { headerString } from "./cloud-events.js";

export const retryCountHeader = "reflector.retry.count";
export const retryNotBeforeHeader = "reflector.retry.not-before";
export const valueOmittedHeader = "reflector.value.omitted";

/**
 * Every header Reflector writes on a dead letter or a retry record: the task consumer's
 * (`failureHeaders` here), the OTLP bridge's dead letters (bridge-publisher.ts) and the replay
 * history `dlq replay` adds (admin/dlq-replay.ts). docs/error-codes.md lists each; a test keeps the
 * list, the doc and the writers in step.
 */
export const failureRecordHeaders = [
  ...describingFailure(),
  valueOmittedHeader,
  retryCountHeader,
  retryNotBeforeHeader,
  "reflector.otlp.trace-id",
  "reflector.otlp.tenant-id",
  "reflector.replayed.from",
  "reflector.replay.count",
] as const;

/**
 * The headers the consumer adds when it dead-letters or retries a record, which describe that
 * failure and not the record itself: a replay from the DLQ drops them (admin/dlq-replay.ts).
 */
export const consumerFailureHeaders: readonly string[] = [
  ...describingFailure(),
  retryCountHeader,
  retryNotBeforeHeader,
];

/** What went wrong, and where the record came from. */
function describingFailure() {
  return [
    "reflector.error.code",
    "reflector.error.message",
    "reflector.original.topic",
    "reflector.original.partition",
    "reflector.original.offset",
    "reflector.consumer.group",
    "reflector.failed.at",
  ] as const;
}

/** The consumed record a failure is about. */
export interface SourceRecord {
  topic: string;
  partition: number;
  message: KafkaMessage;
}

export interface FailureContext {
  groupId: string;
  code: FailureCode;
  reason: string;
  now: Date;
  /**
   * Reflector's own retry topic, the one topic whose `reflector.*` headers Reflector wrote. On any
   * other topic they are the producer's word: a producer could name another tenant's topic as the
   * record's origin and have `dlq replay` deliver it there. Absent: no topic is trusted.
   */
  retryTopic?: string | undefined;
}

/** The header names Reflector writes; a producer's copies of them are dropped from its records. */
export const reflectorHeaderPrefix = "reflector.";

/**
 * Replay history, the one exception: `dlq replay` adds it on the input topic, and a record that
 * fails again keeps it so its dead letter shows how often it came back. It is shown, never acted on.
 */
const replayHistory = new Set(["reflector.replayed.from", "reflector.replay.count"]);

/**
 * Where a record read from the retry topic was read first. Call it only for a record read from the
 * retry topic: anywhere else the headers are the producer's word (see `placeOf`).
 */
export function originOf(source: SourceRecord): { topic: string; partition: string; offset: string } {
  const headers = source.message.headers;
  return {
    topic: headerString(headers, "reflector.original.topic") ?? source.topic,
    partition: headerString(headers, "reflector.original.partition") ?? String(source.partition),
    offset: headerString(headers, "reflector.original.offset") ?? source.message.offset,
  };
}

function fromRetryTopic(source: SourceRecord, context: Pick<FailureContext, "retryTopic">): boolean {
  return context.retryTopic !== undefined && source.topic === context.retryTopic;
}

/** Where the record was first read: its original place when it came back through the retry topic, else where it is. */
export function placeOf(
  source: SourceRecord,
  context: Pick<FailureContext, "retryTopic">,
): { topic: string; partition: string; offset: string } {
  if (fromRetryTopic(source, context)) return originOf(source);
  return { topic: source.topic, partition: String(source.partition), offset: source.message.offset };
}

/**
 * The producer's headers as a failure record may carry them: everything but `reflector.*` (save
 * the replay history), unless the record came from Reflector's retry topic.
 */
export function producerHeaders(source: SourceRecord, context: Pick<FailureContext, "retryTopic">): IHeaders {
  const headers = source.message.headers ?? {};
  if (fromRetryTopic(source, context)) return { ...headers };
  const kept: IHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (lower.startsWith(reflectorHeaderPrefix) && !replayHistory.has(lower)) continue;
    kept[name] = value;
  }
  return kept;
}

/** The headers every dead letter and retry record carries: what failed, why, and where it was read. */
export function failureHeaders(source: SourceRecord, context: FailureContext): IHeaders {
  const origin = placeOf(source, context);
  return {
    "reflector.error.code": context.code,
    "reflector.error.message": context.reason.slice(0, 2000),
    "reflector.original.topic": origin.topic,
    "reflector.original.partition": origin.partition,
    "reflector.original.offset": origin.offset,
    "reflector.consumer.group": context.groupId,
    "reflector.failed.at": context.now.toISOString(),
  };
}

/**
 * The dead letter of a record: its key, value and headers plus the failure headers. A dead letter
 * that the DLQ would refuse (the record was near its topic's size limit, or the DLQ's limit is
 * smaller) goes without the value, then without the producer's headers, and says so in
 * `reflector.value.omitted`, with the original topic, partition and offset to read it from.
 */
export function deadLetterMessage(
  source: SourceRecord,
  context: FailureContext,
  fits: (message: Message) => boolean,
): Message {
  const failure = failureHeaders(source, context);
  const { key, value } = source.message;
  const headers = producerHeaders(source, context);
  const full: Message = { key, value, headers: { ...headers, ...failure } };
  if (fits(full)) return full;
  const origin = placeOf(source, context);
  const omitted = `${String(value?.length ?? 0)} bytes over the dead-letter topic's size limit; read it at ${origin.topic}/${origin.partition}/${origin.offset}`;
  const withoutValue: Message = {
    key,
    value: null,
    headers: { ...headers, ...failure, [valueOmittedHeader]: omitted },
  };
  if (fits(withoutValue)) return withoutValue;
  const bare: Message = {
    key: key && key.length <= 1024 ? key : null,
    value: null,
    headers: { ...failure, [valueOmittedHeader]: `${omitted}; the producer's headers were left out too` },
  };
  return bare;
}

/**
 * The record that hands a failed event to the retry topic, due at `notBefore`; null when it would
 * not fit the retry topic (then the event is dead-lettered with a reference instead).
 */
export function retryMessage(
  source: SourceRecord,
  context: FailureContext,
  notBefore: number,
  fits: (message: Message) => boolean,
): Message | null {
  const message: Message = {
    key: source.message.key,
    value: source.message.value,
    headers: {
      ...producerHeaders(source, context),
      ...failureHeaders(source, context),
      [retryCountHeader]: "1",
      [retryNotBeforeHeader]: String(notBefore),
    },
  };
  return fits(message) ? message : null;
}

/**
 * The record that hands an event over its tenant's share to the retry topic (not a failure): its
 * key, value and producer's headers, where it was read (so that the tenant's topic binding still
 * applies to it) and a retry count of 0, due at once. Null when it would not fit the retry topic.
 */
export function deferredMessage(
  source: SourceRecord,
  context: Pick<FailureContext, "groupId" | "retryTopic" | "now">,
  fits: (message: Message) => boolean,
): Message | null {
  const origin = placeOf(source, context);
  const message: Message = {
    key: source.message.key,
    value: source.message.value,
    headers: {
      ...producerHeaders(source, context),
      "reflector.original.topic": origin.topic,
      "reflector.original.partition": origin.partition,
      "reflector.original.offset": origin.offset,
      "reflector.consumer.group": context.groupId,
      [retryCountHeader]: deferredRetryCount,
      [retryNotBeforeHeader]: String(context.now.getTime()),
    },
  };
  return fits(message) ? message : null;
}

/** The retry count of a deferred record: it has not failed, so its failures still get a retry-topic round. */
export const deferredRetryCount = "0";

/** Read from the retry topic after a failure (not deferred for its tenant's share): its last round. */
export function isRetryRound(source: SourceRecord, retryTopic: string): boolean {
  return (
    source.topic === retryTopic &&
    headerString(source.message.headers, retryCountHeader) !== deferredRetryCount
  );
}
