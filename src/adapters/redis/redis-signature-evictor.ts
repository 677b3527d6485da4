import type { Redis } from "ioredis";
import type { SignatureEvictor } from "../../maintenance/maintenance-ports.js";

/**
 * Forgets cached signatures of pruned reflections. The key layout is the signature index's
 * (`<prefix>:sig:<tenant>:<signature>`, redis-signature-index.ts); keep the two in step.
 */
export function createRedisSignatureEvictor(redis: Redis, options: { keyPrefix: string }): SignatureEvictor {
  return {
    async forget(entries) {
      for (let i = 0; i < entries.length; i += 500) {
        const keys = entries
          .slice(i, i + 500)
          .map((e) => `${options.keyPrefix}:sig:${e.tenantId}:${e.signature}`);
        if (keys.length) await redis.del(...keys);
      }
    },
  };
}
