import type { EachBatchPayload, KafkaMessage } from "kafkajs";
import type { EventRunner } from "./event-runner.js";
import { loopFamilyKey } from "./ordered-scheduler.js";
import type { Work } from "./work.js";

/**
 * Decodes up front, with the event's facts (carried to the run), to find the ordering key (the
 * loop family) and the signature; failures are left to the run.
 */
export async function prepare(
  runner: EventRunner,
  topic: string,
  partition: number,
  message: KafkaMessage,
): Promise<{ key: string | null; work: Work }> {
  const work: Work = { topic, partition, message, event: null, signature: null };
  try {
    const facts = await runner.prepare(work);
    work.event = facts.event;
    work.signature = `${facts.event.tenantId}\u0000${facts.signature}`;
    return { key: loopFamilyKey(facts.event), work };
  } catch {
    // Undecodable now: dead-lettered (no key needed) or retried in the run, ordered by the Kafka key.
    return { key: message.key ? `kafka-key:${message.key.toString()}` : null, work };
  }
}

/**
 * Where kafkajs fetches the partition next (its resolved offset; the commits carry the committed
 * offsets, never kafkajs): after what the partition holds, committed or not, so that the records
 * behind a slow event are fetched too and a fetch does not bring again what is held. While some are
 * not committed, from the last one held: the fetch brings it again (passed over) with what is new,
 * so the partition's batches go on, each pumping it for a round.
 */
export function positionFetch(
  run: { scheduler: { pending: number }; nextToAdd: bigint; fetchFrom: bigint },
  payload: Pick<EachBatchPayload, "resolveOffset">,
): void {
  const next = run.scheduler.pending > 0 ? run.nextToAdd - 1n : run.nextToAdd;
  if (run.nextToAdd === 0n || next === run.fetchFrom) return;
  payload.resolveOffset((next - 1n).toString());
  run.fetchFrom = next;
}
