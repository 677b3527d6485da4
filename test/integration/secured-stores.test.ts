import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migrate } from "../../src/adapters/postgres/migrate.js";
import { pgClientConfig } from "../../src/adapters/postgres/pg-connection.js";
import { createRedisClient } from "../../src/adapters/redis/redis-connection.js";
import { createRegistryCodec } from "../../src/adapters/schema-registry/value-codec.js";
import { ReflectorError } from "../../src/domain/errors.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";
import {
  startAuthRegistry,
  startTlsPostgres,
  startTlsRedis,
  tlsFilesPresent,
  type AuthRegistry,
  type TlsPostgres,
  type TlsRedis,
} from "../support/tls-servers.js";

// A Postgres that takes only TLS, a Redis with only a TLS port and an ACL user, and the schema
// registry behind HTTPS with basic auth, all with certificates from the private CA of
// scripts/services.sh; started here on spare ports, stopped at the end.
const tlsDir = inject("tlsDir");
const caFile = join(tlsDir, "ca.crt");
const untrustedCaFile = join(tlsDir, "untrusted-ca.crt");

let postgres: TlsPostgres;
let redis: TlsRedis;
let registry: AuthRegistry;

beforeAll(async () => {
  if (!tlsFilesPresent(tlsDir))
    throw new Error(`no certificates in "${tlsDir}": run scripts/services.sh tls`);
  postgres = await startTlsPostgres(tlsDir);
  redis = await startTlsRedis(tlsDir);
  registry = await startAuthRegistry(tlsDir, inject("schemaRegistryUrl"));
});

afterAll(async () => {
  // Undefined when beforeAll failed half-way.
  const started = [registry, redis, postgres] as (AuthRegistry | TlsRedis | TlsPostgres | undefined)[];
  for (const server of started) await server?.stop();
});

// The server sends its certificate without the chain: Node says it cannot verify the leaf.
const untrustedCodes = /^(UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN)$/;

/** The errors a Redis client reports while failing to connect once. */
async function connectErrors(url: string, tlsCaFile: string): Promise<(Error & { code?: string })[]> {
  const client = createRedisClient(
    { url, tlsCaFile },
    { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null },
  );
  const errors: (Error & { code?: string })[] = [];
  client.on("error", (err: Error) => errors.push(err));
  await client.connect().catch(() => undefined);
  client.disconnect();
  return errors;
}

async function firstError(work: () => Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await work();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error("expected a failure");
}

describe("Postgres over TLS", () => {
  it("migrates and queries over a verified TLS connection with the CA file", async () => {
    const databaseUrl = postgres.url("reflector_tls");
    await migrate({ databaseUrl, sslCaFile: caFile });
    const pool = new pg.Pool(pgClientConfig({ databaseUrl, sslCaFile: caFile }));
    try {
      const { rows } = await pool.query<{ ssl: boolean; user: string }>(
        "SELECT ssl, current_user AS user FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
      );
      expect(rows).toEqual([{ ssl: true, user: "reflector" }]);
      const migrated = await pool.query("SELECT count(*)::int AS n FROM pgmigrations");
      expect((migrated.rows[0] as { n: number }).n).toBeGreaterThan(0);
    } finally {
      await pool.end();
    }
  });

  it("refuses a server certificate from a CA it was not given", async () => {
    const pool = new pg.Pool(
      pgClientConfig({ databaseUrl: postgres.url("postgres"), sslCaFile: untrustedCaFile }),
    );
    const error = await firstError(() => pool.query("SELECT 1"));
    await pool.end();
    expect(error.code).toMatch(untrustedCodes);
  });

  it("is a server that refuses plaintext, so the passing test above really used TLS", async () => {
    const pool = new pg.Pool(
      pgClientConfig({ databaseUrl: postgres.url("postgres", "disable"), sslCaFile: undefined }),
    );
    const error = await firstError(() => pool.query("SELECT 1"));
    await pool.end();
    expect(error.message).toMatch(/no encryption/);
  });
});

describe("Redis over TLS with an ACL user", () => {
  it("connects as the URL's user over a verified TLS connection", async () => {
    const client = createRedisClient({ url: redis.url(), tlsCaFile: caFile }, { maxRetriesPerRequest: 1 });
    try {
      expect(await client.call("ACL", "WHOAMI")).toBe("reflector");
      await client.set("secured-stores-test", "ok", "EX", 60);
      expect(await client.get("secured-stores-test")).toBe("ok");
    } finally {
      client.disconnect();
    }
  });

  it("is refused with a wrong password, and without the CA", async () => {
    // ioredis reports a refused AUTH or handshake as an 'error' event; connect() only sees the close.
    const auth = await connectErrors(redis.url("not-the-password"), caFile);
    expect(auth.map((e) => e.message).join("\n")).toMatch(/WRONGPASS/);
    const tls = await connectErrors(redis.url(), untrustedCaFile);
    expect(tls.map((e) => e.code)).toContainEqual(expect.stringMatching(untrustedCodes));
  });
});

describe("the schema registry over HTTPS with basic auth", () => {
  it("registers and reads schemas with the credentials; without them it is an outage, not a dead letter", async () => {
    const good = createRegistryCodec({ ...registry, caFile });
    expect(await good.check?.()).toBe(true);
    const event = taskEvent();
    const encoded = await good.encode(`secured-${String(Date.now())}`, "task-completed.v1", event);
    expect(encoded[0]).toBe(0);
    expect(await good.decode(encoded)).toEqual(JSON.parse(JSON.stringify(event)));

    const anonymous = createRegistryCodec({ url: registry.url, caFile });
    expect(await anonymous.check?.()).toBe(false);
    const refused = await firstError(() => anonymous.decode(encoded));
    expect(refused).toBeInstanceOf(ReflectorError);
    expect((refused as unknown as ReflectorError).code).toBe("REGISTRY_UNAVAILABLE");
    expect(registry.counts.refused).toBeGreaterThan(0);
  });
});

describe("the processor on secured stores", () => {
  let h: Harness | undefined;
  afterAll(async () => {
    await h?.close();
  });

  it("processes an event with Postgres and Redis over TLS and the registry over HTTPS with basic auth", async () => {
    const databaseUrl = postgres.url("reflector_tls");
    await migrate({ databaseUrl, sslCaFile: caFile });
    const allowedBefore = registry.counts.allowed;
    const harness = await startHarness({
      registry: true,
      env: {
        DATABASE_URL: databaseUrl,
        DATABASE_SSL_CA_FILE: caFile,
        REDIS_URL: redis.url(),
        REDIS_TLS_CA_FILE: caFile,
        SCHEMA_REGISTRY_URL: registry.url,
        SCHEMA_REGISTRY_USERNAME: registry.username,
        SCHEMA_REGISTRY_PASSWORD: registry.password,
        SCHEMA_REGISTRY_CA_FILE: caFile,
      },
    });
    h = harness;
    const event = taskEvent({ tenantId: `secured-${harness.id}` });
    await harness.publish(event);
    const outputs = await harness.waitForOutputs(event.eventId, 2);
    expect(outputs).toHaveLength(2);
    // Written in the wire format: the processor registered its schemas through the secured front.
    expect(outputs.every((o) => o.raw?.[0] === 0)).toBe(true);
    expect(registry.counts.allowed).toBeGreaterThan(allowedBefore);
    const stored = await harness.pool.query(
      "SELECT count(*)::int AS n FROM processed_events WHERE event_id = $1",
      [event.eventId],
    );
    expect((stored.rows[0] as { n: number }).n).toBe(1);
  });
});
