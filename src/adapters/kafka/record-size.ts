import kafkajs, { type Admin, type IHeaders, type Message, type TopicMessages } from "kafkajs";

// kafkajs is CommonJS; its enums are reachable only through the default export under ESM.
const { ConfigResourceTypes } = kafkajs;

/** A record batch's fixed header (magic 2): what a batch costs before its first record. */
export const batchOverheadBytes = 61;
/** Room kept under every limit for the produce request's own framing (topic name, partition). */
const safetyBytes = 512;

function lengthOf(value: Buffer | string | null | undefined): number {
  if (value === null || value === undefined) return 0;
  return typeof value === "string" ? Buffer.byteLength(value) : value.length;
}

function headerBytes(headers: IHeaders | undefined): number {
  let total = 0;
  for (const [name, value] of Object.entries(headers ?? {})) {
    const values = Array.isArray(value) ? value : [value];
    for (const v of values) total += 10 + Buffer.byteLength(name) + lengthOf(v);
  }
  return total;
}

/**
 * An upper bound of a record's size in a v2 record batch: key, value and headers plus the
 * varints around them (at most 5 bytes each) and the attributes/timestamp/offset fields.
 */
export function recordBytes(message: Message): number {
  return 21 + lengthOf(message.key) + lengthOf(message.value) + headerBytes(message.headers);
}

/** The limits a send must respect: each topic's `max.message.bytes` and the request as a whole. */
export interface SizeLimits {
  /** The largest record batch the topic accepts (`max.message.bytes`). */
  topicBytes(topic: string): number;
  /** The largest produce request this client sends (`KAFKA_MAX_REQUEST_BYTES`). */
  requestBytes: number;
}

/** Whether one record, alone in its batch, is accepted by `topic`. */
export function fitsAlone(message: Message, topic: string, limits: SizeLimits): boolean {
  const room = Math.min(limits.topicBytes(topic), limits.requestBytes) - batchOverheadBytes - safetyBytes;
  return recordBytes(message) <= room;
}

/**
 * Splits a transaction's messages into sends that each respect the limits: all the messages of a
 * topic in one send may land in one partition, hence in one record batch, so a topic's share of a
 * send stays under its `max.message.bytes`, and the whole send under the request limit. Order is
 * kept. Every message must fit alone (`fitsAlone`); one that does not is a bug of the caller.
 */
export function splitBySize(topicMessages: TopicMessages[], limits: SizeLimits): TopicMessages[][] {
  const sends: TopicMessages[][] = [];
  let current = new Map<string, Message[]>();
  let perTopic = new Map<string, number>();
  let total = 0;
  const flush = () => {
    if (current.size === 0) return;
    sends.push([...current].map(([topic, messages]) => ({ topic, messages })));
    current = new Map();
    perTopic = new Map();
    total = 0;
  };
  for (const { topic, messages } of topicMessages) {
    const topicRoom = limits.topicBytes(topic) - batchOverheadBytes - safetyBytes;
    const requestRoom = limits.requestBytes - batchOverheadBytes - safetyBytes;
    for (const message of messages) {
      const bytes = recordBytes(message);
      if (bytes > Math.min(topicRoom, requestRoom)) {
        throw new Error(`a ${String(bytes)}-byte record does not fit ${topic}; it should have been replaced`);
      }
      if ((perTopic.get(topic) ?? 0) + bytes > topicRoom || total + bytes > requestRoom) flush();
      current.set(topic, [...(current.get(topic) ?? []), message]);
      perTopic.set(topic, (perTopic.get(topic) ?? 0) + bytes);
      total += bytes;
    }
  }
  flush();
  return sends;
}

/**
 * Each topic's `max.message.bytes` as the broker applies it (its own setting or the broker's
 * default), read once at start-up. A topic the broker does not describe gets `fallbackBytes`.
 */
export async function readTopicLimits(
  admin: Admin,
  topics: string[],
  fallbackBytes: number,
): Promise<(topic: string) => number> {
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({
      type: ConfigResourceTypes.TOPIC,
      name,
      configNames: ["max.message.bytes"],
    })),
  });
  const limits = new Map<string, number>();
  for (const resource of described.resources) {
    const entry = resource.configEntries.find((e) => e.configName === "max.message.bytes");
    const bytes = Number(entry?.configValue);
    if (Number.isFinite(bytes) && bytes > 0) limits.set(resource.resourceName, bytes);
  }
  return (topic) => limits.get(topic) ?? fallbackBytes;
}
