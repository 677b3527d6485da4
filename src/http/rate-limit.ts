import { createHash } from "node:crypto";
import type { FastifyRequest } from "fastify";

/** The key a request's rate is counted under: its bearer credential, hashed (never kept as it is). */
export function credentialOf(request: FastifyRequest): string {
  return createHash("sha256")
    .update(request.headers.authorization ?? "")
    .digest("base64url");
}

/**
 * A token bucket per key, in memory, per process: `perMinute` tokens a minute, at most `perMinute`
 * at once. `take` spends `amount` tokens of the key's bucket, or none and says how many seconds
 * until it could. At most `maxKeys` buckets are kept (the least recently used forgotten first), so a
 * flood of keys costs bounded memory; a forgotten key starts full, which errs towards serving.
 */
export interface RateLimitOptions {
  perMinute: number;
  maxKeys?: number;
  now?: () => number;
}

export interface RateLimit {
  /** Null when taken; otherwise the whole seconds to wait (`Retry-After`). */
  take(key: string, amount?: number): number | null;
}

export function createRateLimit(options: RateLimitOptions): RateLimit {
  const now = options.now ?? (() => Date.now());
  const maxKeys = options.maxKeys ?? 10_000;
  const capacity = options.perMinute;
  const perMs = options.perMinute / 60_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    take(key, amount = 1) {
      const t = now();
      const bucket = buckets.get(key) ?? { tokens: capacity, at: t };
      buckets.delete(key);
      bucket.tokens = Math.min(capacity, bucket.tokens + (t - bucket.at) * perMs);
      bucket.at = t;
      if (buckets.size >= maxKeys) {
        const oldest = buckets.keys().next().value;
        if (oldest !== undefined) buckets.delete(oldest);
      }
      buckets.set(key, bucket);
      // A request larger than a whole minute's allowance waits for a full bucket, then passes.
      const needed = Math.min(amount, capacity);
      if (bucket.tokens >= needed) {
        bucket.tokens -= amount;
        return null;
      }
      return Math.max(1, Math.ceil((needed - bucket.tokens) / perMs / 1000));
    },
  };
}
