import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, inject } from "vitest";
import { createRedisSignatureIndex } from "../../src/adapters/redis/redis-signature-index.js";
import { signatureIndexContract } from "../contract/signature-index.contract.js";

// The Redis index, as the app builds it (auto-pipelined), held to the port's contract.
const redis = new Redis(inject("redisUrl"), { enableAutoPipelining: true, lazyConnect: true });
const keyPrefix = `contract-${randomUUID().slice(0, 8)}`;
afterAll(async () => {
  const keys = await redis.keys(`${keyPrefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

signatureIndexContract("Redis", () => createRedisSignatureIndex(redis, { keyPrefix }));
