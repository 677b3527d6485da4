import type { Redis } from "ioredis";
import { z } from "zod";
import {
  GeneratorName,
  QualityMetrics,
  Reflection,
  Verdict,
} from "../../domain/contracts/reflection-outcome.js";
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

/** A stored reflection as the cache holds it: checked field by field when read back. */
const CachedReflection = z.object({
  id: z.string().min(1),
  signature: z.string(),
  reflection: Reflection,
  verdict: Verdict.exclude(["rejected"]),
  qualityScore: z.number().min(0).max(1),
  metrics: QualityMetrics,
  violations: z.array(z.string()),
  occurrences: z.number().int().min(1),
  generator: GeneratorName,
  attempts: z.number().int().min(0),
  sourceVector: z.array(z.number()).nullable().optional(),
});

/**
 * One cache entry: the stored reflection with the tenant it was written for (`cachedFor`), so an
 * entry read under a tenant's key is known to be that tenant's. The source vector goes as the
 * base64 of its values (`sourceVectorF32` when each is a float32, as the embedders' and Postgres'
 * `real[]` are, else `sourceVectorF64`): as JSON numbers it was three quarters of the entry, and
 * printing and parsing them most of an entry's cost (every event reads its lesson's entry, and
 * every committed one writes it back with the new occurrence count). Either way the values read
 * back are the ones written. Entries that carry it as `sourceVector` (an array, written before)
 * are still read.
 */
const CacheEntry = CachedReflection.extend({
  cachedFor: z.string(),
  sourceVectorF32: z.string().optional(),
  sourceVectorF64: z.string().optional(),
});

type Width = 32 | 64;

/** The values as base64 (little-endian, as typed arrays lay them out on every supported CPU). */
export function encodeVector(vector: readonly number[], width: Width): string {
  const array = width === 32 ? Float32Array.from(vector) : Float64Array.from(vector);
  return Buffer.from(array.buffer).toString("base64");
}

/** The inverse of `encodeVector`; null when the text is not whole finite values of that width. */
export function decodeVector(text: string, width: Width): number[] | null {
  const bytes = Buffer.from(text, "base64");
  // Node skips characters that are not base64 instead of failing: only the canonical text of the
  // bytes it decoded to is one this code wrote.
  if (bytes.toString("base64") !== text) return null;
  const size = width / 8;
  if (bytes.length % size !== 0) return null;
  const floats = width === 32 ? new Float32Array(bytes.length / size) : new Float64Array(bytes.length / size);
  new Uint8Array(floats.buffer).set(bytes);
  const vector = new Array<number>(floats.length);
  for (let i = 0; i < floats.length; i += 1) {
    const value = floats[i] ?? Number.NaN;
    if (!Number.isFinite(value)) return null;
    vector[i] = value;
  }
  return vector;
}

/** The entry written for a tenant's lesson. */
export function cacheEntry(tenantId: string, stored: StoredReflection): string {
  const { sourceVector, ...rest } = stored;
  const vector = !sourceVector
    ? sourceVector === null
      ? { sourceVector: null }
      : {}
    : sourceVector.every((v) => Math.fround(v) === v)
      ? { sourceVectorF32: encodeVector(sourceVector, 32) }
      : { sourceVectorF64: encodeVector(sourceVector, 64) };
  return JSON.stringify({ ...rest, ...vector, cachedFor: tenantId });
}

/**
 * The lesson in a cache entry, or null (a miss) when the entry is not one this code wrote for this
 * tenant and signature: unparsable, of another shape (an older version's, anything else written
 * under the key), another tenant's, or another signature's. A bad entry never fails the event and
 * never hands it a lesson (whose id the store would then count a new occurrence of).
 */
export function readCacheEntry(
  raw: string | null | undefined,
  tenantId: string,
  signature: string,
): StoredReflection | null {
  if (!raw) return null;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  const entry = CacheEntry.safeParse(json);
  if (!entry.success || entry.data.cachedFor !== tenantId || entry.data.signature !== signature) return null;
  // The entry as written, not the parse (which drops keys the schema does not name).
  const {
    cachedFor: _tenant,
    sourceVectorF32,
    sourceVectorF64,
    ...stored
  } = json as StoredReflection & { cachedFor: string; sourceVectorF32?: string; sourceVectorF64?: string };
  const encoded = sourceVectorF32 ?? sourceVectorF64;
  if (encoded === undefined) return stored;
  // More than one form of the vector: not an entry this code wrote.
  if (stored.sourceVector != null || (sourceVectorF32 !== undefined && sourceVectorF64 !== undefined))
    return null;
  const sourceVector = decodeVector(encoded, sourceVectorF32 !== undefined ? 32 : 64);
  return sourceVector ? { ...stored, sourceVector } : null;
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
        return {
          processed: processed != null,
          cached: signature ? readCacheEntry(raw, tenantId, signature) : null,
        };
      }),
    cached: (tenantId, signature) =>
      withIndexErrors(async () => {
        return readCacheEntry(await redis.get(sigKey(tenantId, signature)), tenantId, signature);
      }),
    remember: (tenantId, stored) =>
      withIndexErrors(async () => {
        await redis.set(sigKey(tenantId, stored.signature), cacheEntry(tenantId, stored), "EX", signatureTtl);
      }),
    markProcessed: (tenantId, eventId, stored) =>
      withIndexErrors(async () => {
        // Plain commands, not a pipeline of their own: with auto-pipelining, the commands of every
        // event whose group commit resolved in the same turn of the event loop go out together in
        // one pipeline (one write, one round trip) instead of one pipeline per event.
        await Promise.all([
          ...(stored
            ? [
                redis.set(
                  sigKey(tenantId, stored.signature),
                  cacheEntry(tenantId, stored),
                  "EX",
                  signatureTtl,
                ),
              ]
            : []),
          redis.set(evtKey(tenantId, eventId), "1", "EX", processedTtl),
        ]);
      }),
  };
}
