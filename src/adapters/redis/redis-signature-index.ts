import type { Redis } from "ioredis";
import { ReflectorError } from "../../domain/errors.js";
import type { SignatureIndex, StoredReflection } from "../../pipeline/ports.js";

export interface RedisSignatureIndexOptions {
  keyPrefix: string;
  /** How long a processed event id is remembered; Postgres keeps it for good. */
  processedTtlSeconds?: number;
  /** Signatures are cached for a while and re-read from Postgres after. */
  signatureTtlSeconds?: number;
}

async function withIndexErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw new ReflectorError("INDEX_UNAVAILABLE", `redis: ${(err as Error).message}`, { cause: err });
  }
}

/**
 * A tenant id or an event id as one part of a key: `:` and `%` percent-encoded, so that tenant
 * `a:b` with event `c` and tenant `a` with event `b:c` never share a key.
 */
export function keyPart(value: string): string {
  return value.replaceAll("%", "%25").replaceAll(":", "%3A");
}

/** The key of a tenant's cached lesson for a signature (the evictor forgets the same key). */
export function signatureKey(keyPrefix: string, tenantId: string, signature: string): string {
  return `${keyPrefix}:sig:${keyPart(tenantId)}:${keyPart(signature)}`;
}

/**
 * Redis in front of Postgres: signature → stored reflection, and processed event ids. Losing
 * it costs extra reads (and, for events processed since, a wasted generation), never a wrong
 * answer: Postgres stays the truth.
 */
export function createRedisSignatureIndex(redis: Redis, options: RedisSignatureIndexOptions): SignatureIndex {
  const processedTtl = options.processedTtlSeconds ?? 7 * 24 * 3600;
  const signatureTtl = options.signatureTtlSeconds ?? 30 * 24 * 3600;
  const sigKey = (tenantId: string, signature: string) =>
    signatureKey(options.keyPrefix, tenantId, signature);
  const evtKey = (tenantId: string, eventId: string) =>
    `${options.keyPrefix}:evt:${keyPart(tenantId)}:${keyPart(eventId)}`;

  return {
    recall: (tenantId, eventId, signature) =>
      withIndexErrors(async () => {
        // One MGET rather than EXISTS then GET: a processed id is stored as "1".
        const [processed, raw] = await redis.mget(
          evtKey(tenantId, eventId),
          ...(signature ? [sigKey(tenantId, signature)] : []),
        );
        return { processed: processed != null, cached: raw ? (JSON.parse(raw) as StoredReflection) : null };
      }),
    cached: (tenantId, signature) =>
      withIndexErrors(async () => {
        const raw = await redis.get(sigKey(tenantId, signature));
        return raw ? (JSON.parse(raw) as StoredReflection) : null;
      }),
    remember: (tenantId, stored) =>
      withIndexErrors(async () => {
        await redis.set(sigKey(tenantId, stored.signature), JSON.stringify(stored), "EX", signatureTtl);
      }),
    markProcessed: (tenantId, eventId, stored) =>
      withIndexErrors(async () => {
        // Plain commands, not a pipeline of their own: with auto-pipelining, the commands of every
        // event whose group commit resolved in the same turn of the event loop go out together in
        // one pipeline (one write, one round trip) instead of one pipeline per event.
        await Promise.all([
          ...(stored
            ? [redis.set(sigKey(tenantId, stored.signature), JSON.stringify(stored), "EX", signatureTtl)]
            : []),
          redis.set(evtKey(tenantId, eventId), "1", "EX", processedTtl),
        ]);
      }),
  };
}
