import type { IHeaders, Kafka, KafkaMessage } from "kafkajs";
import {
  bindingViolation,
  matchesBinding,
  type TenantTopicBinding,
} from "../../../domain/tenant-topic-binding.js";
import { classifyFailure, errorMessage } from "../../../domain/errors.js";
import type { Logger } from "../../../observability/logger.js";
import { consumerFailureHeaders } from "../failure-records.js";
import { createProducer } from "../producers.js";

export const replayedFromHeader = "reflector.replayed.from";
export const replayCountHeader = "reflector.replay.count";

function first(headers: IHeaders | undefined, name: string): string | undefined {
  const value = headers?.[name];
  const one = Array.isArray(value) ? value[0] : value;
  return one === undefined ? undefined : one.toString();
}

/**
 * The headers a replayed message carries: the original ones (CloudEvents, traceparent, content
 * type) without the dead-letter diagnosis, plus where it was replayed from and how many times, so
 * a message that keeps failing shows its history when it lands in the DLQ again.
 */
export function replayHeaders(headers: IHeaders | undefined, partition: number, offset: string): IHeaders {
  const kept: IHeaders = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value !== undefined && !consumerFailureHeaders.includes(name)) kept[name] = value;
  }
  const count = Number(first(headers, replayCountHeader) ?? "0");
  kept[replayedFromHeader] = `dlq:${String(partition)}:${offset}`;
  kept[replayCountHeader] = String((Number.isFinite(count) ? count : 0) + 1);
  return kept;
}

export interface ReplayItem {
  partition: number;
  offset: string;
  key: string | null;
  code: string;
  action: "replayed" | "skipped" | "would-replay";
  reason?: string;
}

export interface ReplaySummary {
  replayed: number;
  skipped: number;
  /** Per dead-letter error code: how many were replayed (or would be) and skipped. */
  byCode: Record<string, { replayed: number; skipped: number }>;
  items: ReplayItem[];
  /** Partitions not read up to the end offset seen at start (idle timeout or --max). */
  unfinished: number[];
}

export interface ReplayOptions {
  kafka: Kafka;
  deadLetterTopic: string;
  targetTopic: string;
  /**
   * Topics whose dead letters belong back in `targetTopic` (the input topic and its retry topic).
   * Dead letters from another input (the feedback consumer shares the DLQ) are skipped, not
   * pushed into a topic whose consumer cannot read them.
   */
  sourceTopics: string[];
  /**
   * Under `TENANT_TOPIC_BINDING`: a dead letter first read from a tenant's bound topic goes back to
   * that topic, not to `targetTopic`, which the processor does not read then. And since the
   * dead letter's `reflector.original.topic` says where to send it, its event is checked against
   * the binding here, before it is written anywhere: an event whose `tenantId` is not the
   * destination's tenant (or that cannot be read) is skipped, whatever the header says.
   */
  tenancy?: {
    binding: TenantTopicBinding;
    /** The value as the processor decodes it (JSON, or the registry's wire format). */
    decode(value: Buffer): Promise<unknown>;
  };
  /** The replay's own consumer group; its committed offsets are how far the DLQ was drained. */
  groupId: string;
  max?: number;
  dryRun: boolean;
  logger: Logger;
  /** Give up when nothing new arrives for this long (an open transaction can hold the end back). */
  idleTimeoutMs?: number;
}

/**
 * Dead letters no replay can make right: the event named another tenant than its topic's. Sending
 * it anywhere would either be refused again or, on the named tenant's topic, cross a tenant.
 */
export const neverReplayedCodes: readonly string[] = ["TENANT_TOPIC_MISMATCH"];

/** Why a message is not replayed, or null to replay it. */
function skipReason(message: KafkaMessage, code: string, accepts: (from: string) => boolean): string | null {
  if (neverReplayedCodes.includes(code)) return `${code}: the event is not its topic's tenant's to replay`;
  const from = first(message.headers, "reflector.original.topic");
  if (from !== undefined && !accepts(from)) return `dead-lettered from ${from}, not this input`;
  if (!message.value || message.value.length === 0) return "empty value (tombstone): nothing to process";
  return null;
}

/** The tenant an event claims, or null when it names none. */
function claimedTenant(raw: unknown): string | null {
  if (typeof raw !== "object" || raw === null || !("tenantId" in raw)) return null;
  return typeof raw.tenantId === "string" ? raw.tenantId : null;
}

/** Under the binding: why the event may not go to `topic`, or null when its tenant is the topic's. */
async function tenancyReason(
  tenancy: NonNullable<ReplayOptions["tenancy"]>,
  topic: string,
  value: Buffer,
): Promise<string | null> {
  let tenantId: string | null;
  try {
    tenantId = claimedTenant(await tenancy.decode(value));
  } catch (err) {
    // The registry away: stop here (nothing of this batch is committed) rather than skip for good.
    if (classifyFailure(err) === "retry") throw err;
    return `its tenant cannot be read (${errorMessage(err)}), so it cannot be checked against ${topic}'s`;
  }
  if (tenantId === null) return `it names no tenant, so it cannot be checked against ${topic}'s`;
  const violation = bindingViolation(tenancy.binding, topic, tenantId);
  return violation === null ? null : `TENANT_TOPIC_MISMATCH: ${violation}`;
}

/**
 * Drains the DLQ back into the input topic, up to the end offsets observed at start. Each batch is
 * re-published (same key, so the same partition and order; same value) and the replay group's
 * offsets are committed only after Kafka acknowledged it: a crash in between replays a batch twice
 * — harmless, since processing is idempotent by event id — and never loses one.
 */
export async function replayDeadLetters(options: ReplayOptions): Promise<ReplaySummary> {
  const { kafka, logger, tenancy } = options;
  const tenantTopic = (topic: string) => tenancy?.binding.some((b) => matchesBinding(b, topic)) ?? false;
  const accepts = (from: string) => options.sourceTopics.includes(from) || tenantTopic(from);
  const admin = kafka.admin();
  await admin.connect();
  let ends: Map<number, number>;
  let starts: Map<number, number>;
  try {
    const [offsets, committed] = await Promise.all([
      admin.fetchTopicOffsets(options.deadLetterTopic),
      admin.fetchOffsets({ groupId: options.groupId, topics: [options.deadLetterTopic] }),
    ]);
    ends = new Map(offsets.map((o) => [o.partition, Number(o.high)]));
    const lows = new Map(offsets.map((o) => [o.partition, Number(o.low)]));
    starts = new Map(
      (committed[0]?.partitions ?? []).map((p) => [
        p.partition,
        Number(p.offset) >= 0 ? Number(p.offset) : (lows.get(p.partition) ?? 0),
      ]),
    );
  } finally {
    await admin.disconnect();
  }
  const summary: ReplaySummary = { replayed: 0, skipped: 0, byCode: {}, items: [], unfinished: [] };
  const position = new Map<number, number>();
  for (const partition of ends.keys()) position.set(partition, starts.get(partition) ?? 0);
  const pending = () => [...ends].filter(([p, end]) => (position.get(p) ?? 0) < end).map(([p]) => p);
  if (pending().length === 0) return summary;

  const max = options.max ?? Number.POSITIVE_INFINITY;
  // The same partitioner as the agents' producers and the app, so a key lands where it did.
  const producer = createProducer(kafka);
  const consumer = kafka.consumer({ groupId: options.groupId, allowAutoTopicCreation: false });
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let lastProgress = Date.now();
  const limitReached = () => summary.replayed >= max;
  const record = (item: ReplayItem) => {
    summary.items.push(item);
    const counts = (summary.byCode[item.code] ??= { replayed: 0, skipped: 0 });
    if (item.action === "skipped") {
      counts.skipped += 1;
      summary.skipped += 1;
    } else {
      counts.replayed += 1;
      summary.replayed += 1;
    }
  };
  const advance = (partition: number, next: number) => {
    lastProgress = Date.now();
    position.set(partition, Math.max(position.get(partition) ?? 0, next));
    if (pending().length === 0 || limitReached()) finish();
  };
  // Batches of only transaction markers never reach eachBatch; they still move the position.
  consumer.on(consumer.events.END_BATCH_PROCESS, (event) => {
    const { topic, partition, lastOffset } = event.payload;
    if (topic === options.deadLetterTopic && !limitReached()) {
      advance(partition, Math.min(Number(lastOffset) + 1, ends.get(partition) ?? 0));
    }
  });

  try {
    if (!options.dryRun) await producer.connect();
    await consumer.connect();
    await consumer.subscribe({ topics: [options.deadLetterTopic], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch }) => {
        const end = ends.get(batch.partition) ?? 0;
        const outgoing = new Map<string, { key: Buffer | null; value: Buffer | null; headers: IHeaders }[]>();
        let next: number | null = null;
        for (const message of batch.messages) {
          if (Number(message.offset) >= end || limitReached()) break;
          const code = first(message.headers, "reflector.error.code") ?? "UNKNOWN";
          const key = message.key?.toString() ?? null;
          const from = first(message.headers, "reflector.original.topic");
          const topic = from !== undefined && tenantTopic(from) ? from : options.targetTopic;
          let reason = skipReason(message, code, accepts);
          if (reason === null && tenancy && message.value) {
            reason = await tenancyReason(tenancy, topic, message.value);
          }
          const base = { partition: batch.partition, offset: message.offset, key, code };
          if (reason) record({ ...base, action: "skipped", reason });
          else {
            record({ ...base, action: options.dryRun ? "would-replay" : "replayed" });
            const list = outgoing.get(topic) ?? [];
            list.push({
              key: message.key,
              value: message.value,
              headers: replayHeaders(message.headers, batch.partition, message.offset),
            });
            outgoing.set(topic, list);
          }
          next = Number(message.offset) + 1;
        }
        // Past the last data record of a fully read batch are only transaction markers.
        const whole = next !== null && Number(batch.lastOffset()) < end && !limitReached();
        if (whole) next = Number(batch.lastOffset()) + 1;
        if (next === null) return;
        if (!options.dryRun) {
          if (outgoing.size > 0) {
            const topicMessages = [...outgoing].map(([topic, messages]) => ({ topic, messages }));
            await producer.sendBatch({ acks: -1, topicMessages });
          }
          // Only after the acknowledgement: the replay group never skips an unpublished message.
          await consumer.commitOffsets([
            { topic: options.deadLetterTopic, partition: batch.partition, offset: String(next) },
          ]);
        }
        advance(batch.partition, next);
      },
    });
    const idleMs = options.idleTimeoutMs ?? 30_000;
    await Promise.race([
      finished,
      new Promise<void>((resolve) => {
        const check = setInterval(() => {
          if (Date.now() - lastProgress > idleMs) {
            clearInterval(check);
            resolve();
          }
        }, 250);
        void finished.then(() => {
          clearInterval(check);
        });
      }),
    ]);
  } finally {
    await consumer.disconnect();
    if (!options.dryRun) await producer.disconnect();
  }
  summary.unfinished = pending();
  if (summary.unfinished.length > 0 && !limitReached()) {
    logger.warn({ partitions: summary.unfinished }, "stopped before the end offsets seen at start");
  }
  return summary;
}
