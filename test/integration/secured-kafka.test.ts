import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createKafka, type KafkaSasl } from "../../src/adapters/kafka/kafka-client.js";
import { createApp } from "../../src/composition/app.js";
import { loadConfig } from "../../src/config/config.js";
import { ReflectorError } from "../../src/domain/errors.js";
import { createLogger } from "../../src/observability/logger.js";
import { cliEnv, runReflector } from "../support/cli-env.js";
import { startHarness, type Harness } from "../support/harness.js";
import { taskEvent } from "../support/task-events.js";

// The broker's SASL_SSL listener from scripts/services.sh: SCRAM users made at storage format,
// a certificate from the private CA the script made. The plain listener is what other tests use.
const secured = inject("kafkaSaslSsl");
const tlsDir = inject("tlsDir");
const caFile = join(tlsDir, "ca.crt");
const logger = createLogger("silent");

/** The settings of a processor on the secured listener; `extra` overrides any of them. */
function securedEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    KAFKA_BROKERS: secured.brokers,
    KAFKA_SSL: "true",
    KAFKA_SSL_CA_FILE: caFile,
    KAFKA_SASL_MECHANISM: "scram-sha-512",
    KAFKA_SASL_USERNAME: secured.username,
    KAFKA_SASL_PASSWORD: secured.password,
    ...extra,
  };
}

/** What a processor's start-up throws with these settings (undefined if it starts). */
async function startFailure(extra: Record<string, string>): Promise<{ error: unknown; elapsedMs: number }> {
  const config = loadConfig({
    ...securedEnv(extra),
    DATABASE_URL: inject("databaseUrl"),
    REDIS_URL: inject("redisUrl"),
    REDIS_KEY_PREFIX: `secured-${randomUUID().slice(0, 8)}`,
    HTTP_PORT: "0",
    HTTP_HOST: "127.0.0.1",
    LOG_LEVEL: "silent",
    REFLECTOR_EMBEDDINGS: "hashing",
  });
  const app = createApp(config, logger);
  const started = Date.now();
  let error: unknown;
  try {
    await app.start();
  } catch (err) {
    error = err;
  }
  const elapsedMs = Date.now() - started;
  await app.stop();
  return { error, elapsedMs };
}

// kafkajs' retries of one connection (8, from 200 ms doubling up to 30 s) take well over a minute:
// a failure within this bound was not retried. A bound on "no retry loop", not a speed goal.
const withoutRetriesMs = 20_000;

describe("Kafka over SASL_SSL", () => {
  const harnesses: Harness[] = [];

  beforeAll(async () => {
    const [host = "", port = ""] = secured.brokers.split(":");
    const listening =
      secured.password !== "" &&
      tlsDir !== "" &&
      (await new Promise<boolean>((resolve) => {
        const socket = connect({ host, port: Number(port) }, () => {
          socket.end();
          resolve(true);
        });
        socket.on("error", () => {
          resolve(false);
        });
      }));
    if (!listening) {
      throw new Error(
        `no SASL_SSL listener at "${secured.brokers}": start the broker with scripts/services.sh (restart it if it predates the listener) or set KAFKA_SASL_SSL_BROKERS, KAFKA_SASL_SSL_USERNAME, KAFKA_SASL_SSL_PASSWORD_FILE and LOCAL_TLS_DIR`,
      );
    }
  });
  afterAll(async () => {
    for (const h of harnesses) await h.close();
  });

  it("runs the processor over SCRAM-SHA-512 with a client certificate: consumes, produces, commits", async () => {
    const h = await startHarness({
      env: securedEnv({
        KAFKA_SSL_CERT_FILE: join(tlsDir, "client.crt"),
        KAFKA_SSL_KEY_FILE: join(tlsDir, "client.key"),
      }),
    });
    harnesses.push(h);
    expect(h.config.kafka.sasl?.mechanism).toBe("scram-sha-512");
    const event = taskEvent({ tenantId: `secured-${h.id}` });
    await h.publish(event);
    const outputs = await h.waitForOutputs(event.eventId, 2);
    expect(outputs).toHaveLength(2);
    expect(outputs.map((o) => o.topic)).toContain(h.config.topics.loopDecision);
  });

  it.each(["scram-sha-256", "plain"] as const)("authenticates with %s", async (mechanism) => {
    const sasl: KafkaSasl = { mechanism, username: secured.username, password: secured.password };
    const kafka = createKafka({
      connection: { brokers: [secured.brokers], ssl: { caFile }, sasl },
      clientId: `secured-${mechanism}`,
      logger,
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const { brokers } = await admin.describeCluster();
      expect(brokers.map((b) => `${b.host}:${String(b.port)}`)).toEqual([secured.brokers]);
    } finally {
      await admin.disconnect();
    }
  });

  it("stops start-up at once with KAFKA_AUTH_FAILED on a wrong password", async () => {
    const { error, elapsedMs } = await startFailure({ KAFKA_SASL_PASSWORD: "not-the-password" });
    expect(error).toBeInstanceOf(ReflectorError);
    expect((error as ReflectorError).code).toBe("KAFKA_AUTH_FAILED");
    expect((error as Error).message).toContain(`user "${secured.username}"`);
    expect((error as Error).message).not.toContain("not-the-password");
    expect(elapsedMs).toBeLessThan(withoutRetriesMs);
  });

  it("stops start-up at once with KAFKA_TLS_FAILED when the broker's CA is not trusted", async () => {
    const untrusted = join(tlsDir, "untrusted-ca.crt");
    const { error, elapsedMs } = await startFailure({ KAFKA_SSL_CA_FILE: untrusted });
    expect(error).toBeInstanceOf(ReflectorError);
    expect((error as ReflectorError).code).toBe("KAFKA_TLS_FAILED");
    expect((error as Error).message).toContain(untrusted);
    expect(elapsedMs).toBeLessThan(withoutRetriesMs);
  });

  it("reports the refused password from the CLI (`topics`) with the code, exit 1", async () => {
    const config = loadConfig(securedEnv({ KAFKA_SASL_PASSWORD: "not-the-password" }));
    const failed = await runReflector(
      ["topics"],
      cliEnv(config, {
        KAFKA_SSL: "true",
        KAFKA_SSL_CA_FILE: caFile,
        KAFKA_SASL_MECHANISM: "scram-sha-512",
        KAFKA_SASL_USERNAME: secured.username,
        KAFKA_SASL_PASSWORD: "not-the-password",
      }),
    ).then(
      () => null,
      (err: unknown) => err as { code?: number; stderr?: string },
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain("KAFKA_AUTH_FAILED");
    expect(failed?.stderr).not.toContain("not-the-password");
  });
});
