import type { Redis } from "ioredis";
import type { SignatureEvictor } from "../../maintenance/maintenance-ports.js";
import { signatureKey } from "./redis-signature-index.js";

/**
 * Forgets cached signatures of pruned reflections, under the signature index's own keys
 * (`signatureKey`).
 */
export function createRedisSignatureEvictor(redis: Redis, options: { keyPrefix: string }): SignatureEvictor {
  return {
    async forget(entries) {
      for (let i = 0; i < entries.length; i += 500) {
        const keys = entries
          .slice(i, i + 500)
          .map((e) => signatureKey(options.keyPrefix, e.tenantId, e.signature));
        if (keys.length) await redis.del(...keys);
      }
    },
  };
}
