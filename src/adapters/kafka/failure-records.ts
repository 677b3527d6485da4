import type { IHeaders, KafkaMessage, Message } from "kafkajs";
import type { FailureCode } from "../../pipeline/failure-policy.js";
import { headerString } from "./cloud-events.js";

export const retryCountHeader = "reflector.retry.count";
export const retryNotBeforeHeader = "reflector.retry.not-before";
export const valueOmittedHeader = "reflector.value.omitted";

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
}

/** Where the record came from first: a record replayed or retried keeps its original place. */
export function originOf(source: SourceRecord): { topic: string; partition: string; offset: string } {
  const headers = source.message.headers;
  return {
    topic: headerString(headers, "reflector.original.topic") ?? source.topic,
    partition: headerString(headers, "reflector.original.partition") ?? String(source.partition),
    offset: headerString(headers, "reflector.original.offset") ?? source.message.offset,
  };
}

/** The headers every dead letter and retry record carries: what failed, why, and where it was read. */
export function failureHeaders(source: SourceRecord, context: FailureContext): IHeaders {
  const origin = originOf(source);
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
  const { key, value, headers } = source.message;
  const full: Message = { key, value, headers: { ...headers, ...failure } };
  if (fits(full)) return full;
  const origin = originOf(source);
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
      ...source.message.headers,
      ...failureHeaders(source, context),
      [retryCountHeader]: "1",
      [retryNotBeforeHeader]: String(notBefore),
    },
  };
  return fits(message) ? message : null;
}
