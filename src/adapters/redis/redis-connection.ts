import { readFileSync } from "node:fs";
import { Redis, type RedisOptions } from "ioredis";

/** Where Redis is: `rediss://` for TLS, `redis://user:password@host` for an ACL user. */
export interface RedisConnection {
  url: string;
  /** PEM bundle that signed the server's certificate (with `rediss://`). */
  tlsCaFile: string | undefined;
}

/** Every Redis client Reflector builds: the URL's TLS and ACL user, plus the CA of a private PKI. */
export function createRedisClient(connection: RedisConnection, options: RedisOptions = {}): Redis {
  const tls = connection.tlsCaFile ? { tls: { ca: readFileSync(connection.tlsCaFile, "utf8") } } : {};
  return new Redis(connection.url, { ...options, ...tls });
}
