import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { migrate } from "../../src/adapters/postgres/migrate.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

declare module "vitest" {
  export interface ProvidedContext {
    kafkaBrokers: string;
    schemaRegistryUrl: string;
    /** Kafka's own jars (fetched by scripts/services.sh): its console producer is a third-party client. */
    kafkaLibs: string;
    databaseUrl: string;
    redisUrl: string;
    /** The private CA and certificates of scripts/services.sh (ca.crt, server.*, client.*, untrusted-ca.crt). */
    tlsDir: string;
    /** The broker's SASL_SSL listener (scripts/services.sh) and its SCRAM/PLAIN user. */
    kafkaSaslSsl: { brokers: string; username: string; password: string };
  }
}

function servicesEnv(): Record<string, string> {
  const out = execFileSync("bash", [`${root}scripts/services.sh`, "env"], { encoding: "utf8" });
  return Object.fromEntries(
    out
      .split("\n")
      .map((line) => /^([A-Z_]+)=(.*)$/.exec(line.trim()))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1] ?? "", m[2] ?? ""]),
  );
}

/**
 * Integration tests run against real services. Without KAFKA_BROKERS, the project's own script
 * starts Kafka and the schema registry (idempotent), so `npm test` works on a fresh clone. The
 * local embedding model (the processor's default embedder) is fetched in either case: Kafka may
 * run elsewhere, the model must be on this machine.
 */
export default async function setup(project: TestProject): Promise<void> {
  // The model and Kafka's jars, whether or not Kafka runs elsewhere: the processor needs the one,
  // the tests use the other's console producer as a client that is not kafkajs.
  execFileSync("bash", [`${root}scripts/services.sh`, "fetch"], { stdio: "inherit" });
  let kafkaBrokers = process.env.KAFKA_BROKERS;
  let schemaRegistryUrl = process.env.SCHEMA_REGISTRY_URL;
  if (!kafkaBrokers) {
    execFileSync("bash", [`${root}scripts/services.sh`, "start"], { stdio: "inherit" });
    const env = servicesEnv();
    kafkaBrokers = env.KAFKA_BROKERS;
    schemaRegistryUrl ??= env.SCHEMA_REGISTRY_URL;
  }
  if (!kafkaBrokers || !schemaRegistryUrl)
    throw new Error("KAFKA_BROKERS and SCHEMA_REGISTRY_URL are needed");
  // The secured listener: given, or the one scripts/services.sh starts next to the plain one.
  execFileSync("bash", [`${root}scripts/services.sh`, "tls"], { stdio: "pipe" });
  const env = servicesEnv();
  const passwordFile = process.env.KAFKA_SASL_SSL_PASSWORD_FILE ?? env.KAFKA_SASL_SSL_PASSWORD_FILE ?? "";
  project.provide("tlsDir", process.env.LOCAL_TLS_DIR ?? env.LOCAL_TLS_DIR ?? "");
  project.provide("kafkaSaslSsl", {
    brokers: process.env.KAFKA_SASL_SSL_BROKERS ?? env.KAFKA_SASL_SSL_BROKERS ?? "",
    username: process.env.KAFKA_SASL_SSL_USERNAME ?? env.KAFKA_SASL_SSL_USERNAME ?? "",
    password: passwordFile && existsSync(passwordFile) ? readFileSync(passwordFile, "utf8").trim() : "",
  });
  const databaseUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/reflector_test";
  await migrate({ databaseUrl });
  project.provide("kafkaBrokers", kafkaBrokers);
  project.provide("kafkaLibs", env.KAFKA_LIBS ?? "");
  project.provide("schemaRegistryUrl", schemaRegistryUrl);
  project.provide("databaseUrl", databaseUrl);
  project.provide("redisUrl", process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379/0");
}
