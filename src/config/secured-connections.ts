import { readFileSync } from "node:fs";
import { z } from "zod";

/**
 * The settings of secured connections: TLS and SASL to Kafka, basic auth and a CA for the schema
 * registry, a CA for Postgres and Redis over TLS. Part of the one schema in config.ts; kept here so
 * that the rules that tie them together sit next to them. docs/operations.md#credentials lists them.
 */
const file = z.string().min(1);
const flag = z.enum(["true", "false", "1", "0"]).transform((value) => value === "true" || value === "1");

export const SecuredConnectionsSchema = z.object({
  KAFKA_SSL: flag.default(false),
  KAFKA_SSL_CA_FILE: file.optional(),
  KAFKA_SSL_CERT_FILE: file.optional(),
  KAFKA_SSL_KEY_FILE: file.optional(),
  KAFKA_SASL_MECHANISM: z.enum(["plain", "scram-sha-256", "scram-sha-512"]).optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  SCHEMA_REGISTRY_USERNAME: z.string().min(1).optional(),
  SCHEMA_REGISTRY_PASSWORD: z.string().min(1).optional(),
  SCHEMA_REGISTRY_CA_FILE: file.optional(),
  DATABASE_SSL_CA_FILE: file.optional(),
  REDIS_TLS_CA_FILE: file.optional(),
  /**
   * Credentials that would cross the network in clear are refused unless this says so: SASL PLAIN
   * without KAFKA_SSL, registry basic auth over http://, API keys presented over plain HTTP from
   * another host. For a laboratory, never for production.
   */
  ALLOW_CLEARTEXT_CREDENTIALS: flag.default(false),
});

type SecuredEnv = z.infer<typeof SecuredConnectionsSchema>;

export interface SecuredConnections {
  kafka: {
    ssl: { caFile: string | undefined; certFile: string | undefined; keyFile: string | undefined } | false;
    sasl:
      | { mechanism: NonNullable<SecuredEnv["KAFKA_SASL_MECHANISM"]>; username: string; password: string }
      | undefined;
  };
  schemaRegistry: {
    username: string | undefined;
    password: string | undefined;
    caFile: string | undefined;
  };
  databaseSslCaFile: string | undefined;
  redisTlsCaFile: string | undefined;
}

/** Call only after securedConnectionsProblems found none (the pairs it checks are assumed here). */
export function securedConnections(e: SecuredEnv): SecuredConnections {
  const sasl =
    e.KAFKA_SASL_MECHANISM && e.KAFKA_SASL_USERNAME && e.KAFKA_SASL_PASSWORD
      ? {
          mechanism: e.KAFKA_SASL_MECHANISM,
          username: e.KAFKA_SASL_USERNAME,
          password: e.KAFKA_SASL_PASSWORD,
        }
      : undefined;
  return {
    kafka: {
      ssl: e.KAFKA_SSL
        ? { caFile: e.KAFKA_SSL_CA_FILE, certFile: e.KAFKA_SSL_CERT_FILE, keyFile: e.KAFKA_SSL_KEY_FILE }
        : false,
      sasl,
    },
    schemaRegistry: {
      username: e.SCHEMA_REGISTRY_USERNAME,
      password: e.SCHEMA_REGISTRY_PASSWORD,
      caFile: e.SCHEMA_REGISTRY_CA_FILE,
    },
    databaseSslCaFile: e.DATABASE_SSL_CA_FILE,
    redisTlsCaFile: e.REDIS_TLS_CA_FILE,
  };
}

/** A PEM file that cannot be read or holds no PEM block; the message names the path, never the content. */
function pemProblem(name: string, path: string): string | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    return `${name}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`;
  }
  return text.includes("-----BEGIN ") ? null : `${name}: ${path} is not a PEM file`;
}

const pemSettings = [
  "KAFKA_SSL_CA_FILE",
  "KAFKA_SSL_CERT_FILE",
  "KAFKA_SSL_KEY_FILE",
  "SCHEMA_REGISTRY_CA_FILE",
  "DATABASE_SSL_CA_FILE",
  "REDIS_TLS_CA_FILE",
] as const;

/**
 * Settings that only make sense together, checked on the raw values so that every problem is
 * listed with the rest. Messages name settings and paths, never a password.
 */
export function securedConnectionsProblems(env: Record<string, string | undefined>): string[] {
  const problems: string[] = [];
  const set = (name: string) => env[name] !== undefined;
  for (const name of pemSettings) {
    const path = env[name];
    const problem = path === undefined ? null : pemProblem(name, path);
    if (problem) problems.push(problem);
  }
  const kafkaSsl = env.KAFKA_SSL === "true" || env.KAFKA_SSL === "1";
  for (const name of ["KAFKA_SSL_CA_FILE", "KAFKA_SSL_CERT_FILE", "KAFKA_SSL_KEY_FILE"]) {
    if (set(name) && !kafkaSsl) problems.push(`${name}: set, but KAFKA_SSL is not true`);
  }
  if (set("KAFKA_SSL_CERT_FILE") !== set("KAFKA_SSL_KEY_FILE")) {
    problems.push(
      "KAFKA_SSL_CERT_FILE: a client certificate needs both KAFKA_SSL_CERT_FILE and KAFKA_SSL_KEY_FILE",
    );
  }
  if (set("KAFKA_SASL_MECHANISM")) {
    for (const name of ["KAFKA_SASL_USERNAME", "KAFKA_SASL_PASSWORD"]) {
      if (!set(name)) problems.push(`${name}: KAFKA_SASL_MECHANISM is set, so ${name} is needed`);
    }
  } else if (set("KAFKA_SASL_USERNAME") || set("KAFKA_SASL_PASSWORD")) {
    problems.push("KAFKA_SASL_MECHANISM: KAFKA_SASL_USERNAME/PASSWORD are set but no mechanism is");
  }
  if (set("SCHEMA_REGISTRY_USERNAME") !== set("SCHEMA_REGISTRY_PASSWORD")) {
    problems.push(
      "SCHEMA_REGISTRY_USERNAME: basic auth needs both SCHEMA_REGISTRY_USERNAME and SCHEMA_REGISTRY_PASSWORD",
    );
  }
  const allowCleartext =
    env.ALLOW_CLEARTEXT_CREDENTIALS === "true" || env.ALLOW_CLEARTEXT_CREDENTIALS === "1";
  if (!allowCleartext && env.KAFKA_SASL_MECHANISM === "plain" && !kafkaSsl) {
    problems.push(
      "KAFKA_SASL_MECHANISM: plain sends the password in clear without KAFKA_SSL=true (set ALLOW_CLEARTEXT_CREDENTIALS=true to accept that on purpose)",
    );
  }
  const registryUrl = env.SCHEMA_REGISTRY_URL;
  if (!allowCleartext && set("SCHEMA_REGISTRY_USERNAME") && registryUrl?.startsWith("http://")) {
    problems.push(
      "SCHEMA_REGISTRY_USERNAME: basic auth over http:// sends the password in clear; use https:// (or ALLOW_CLEARTEXT_CREDENTIALS=true on purpose)",
    );
  }
  for (const name of ["SCHEMA_REGISTRY_USERNAME", "SCHEMA_REGISTRY_CA_FILE"]) {
    if (set(name) && registryUrl === undefined) problems.push(`${name}: set, but SCHEMA_REGISTRY_URL is not`);
  }
  if (set("SCHEMA_REGISTRY_CA_FILE") && registryUrl !== undefined && !registryUrl.startsWith("https://")) {
    problems.push("SCHEMA_REGISTRY_CA_FILE: set, but SCHEMA_REGISTRY_URL is not https://");
  }
  // The model's API key is a bearer secret: over http:// to another host it crosses the network
  // in clear, as basic auth to the registry would.
  const modelUrl = env.OPENAI_BASE_URL;
  if (!allowCleartext && set("OPENAI_API_KEY") && modelUrl !== undefined && /^http:\/\//i.test(modelUrl)) {
    const host = /^http:\/\/(\[[^\]]*\]|[^/:?#]*)/i.exec(modelUrl)?.[1]?.toLowerCase() ?? "";
    if (!["localhost", "127.0.0.1", "[::1]"].includes(host) && !host.startsWith("127.")) {
      problems.push(
        "OPENAI_BASE_URL: OPENAI_API_KEY over http:// sends the key in clear; use https:// (or ALLOW_CLEARTEXT_CREDENTIALS=true on purpose)",
      );
    }
  }
  // sslmode=no-verify encrypts but checks no certificate: anyone on the path can present one.
  if (!allowCleartext && /[?&]sslmode=no-verify(&|$)/.test(env.DATABASE_URL ?? "")) {
    problems.push(
      "DATABASE_URL: sslmode=no-verify checks no certificate (anyone on the path can answer as Postgres); use sslmode=verify-full with DATABASE_SSL_CA_FILE (or ALLOW_CLEARTEXT_CREDENTIALS=true on purpose)",
    );
  }
  if (set("DATABASE_SSL_CA_FILE") && /[?&]sslmode=disable(&|$)/.test(env.DATABASE_URL ?? "")) {
    problems.push("DATABASE_SSL_CA_FILE: set, but DATABASE_URL has sslmode=disable");
  }
  if (set("REDIS_TLS_CA_FILE") && !(env.REDIS_URL ?? "").startsWith("rediss://")) {
    problems.push("REDIS_TLS_CA_FILE: set, but REDIS_URL is not rediss://");
  }
  return problems;
}
