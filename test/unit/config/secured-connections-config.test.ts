import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.js";

const dir = mkdtempSync(join(tmpdir(), "reflector-secured-config-"));
const pem = join(dir, "ca.crt");
writeFileSync(pem, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
const notPem = join(dir, "notes.txt");
writeFileSync(notPem, "hello");

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("secured connections in the config", () => {
  it("builds TLS and SASL for Kafka, basic auth for the registry and the stores' CAs", () => {
    const config = loadConfig({
      KAFKA_SSL: "true",
      KAFKA_SSL_CA_FILE: pem,
      KAFKA_SSL_CERT_FILE: pem,
      KAFKA_SSL_KEY_FILE: pem,
      KAFKA_SASL_MECHANISM: "scram-sha-512",
      KAFKA_SASL_USERNAME: "reflector",
      KAFKA_SASL_PASSWORD: "s3cret",
      SCHEMA_REGISTRY_URL: "https://registry.example/apis/ccompat/v7",
      SCHEMA_REGISTRY_USERNAME: "svc",
      SCHEMA_REGISTRY_PASSWORD: "pw",
      SCHEMA_REGISTRY_CA_FILE: pem,
      DATABASE_URL: "postgres://u:p@db:5432/reflector?sslmode=verify-full",
      DATABASE_SSL_CA_FILE: pem,
      REDIS_URL: "rediss://reflector:pw@redis:6380/0",
      REDIS_TLS_CA_FILE: pem,
    });
    expect(config.kafka.ssl).toEqual({ caFile: pem, certFile: pem, keyFile: pem });
    expect(config.kafka.sasl).toEqual({
      mechanism: "scram-sha-512",
      username: "reflector",
      password: "s3cret",
    });
    expect(config.schemaRegistry).toEqual({ username: "svc", password: "pw", caFile: pem });
    expect(config.databaseSslCaFile).toBe(pem);
    expect(config.redis.tlsCaFile).toBe(pem);
    expect(Object.isFrozen(config.kafka.sasl)).toBe(true);
  });

  it("takes TLS with the system's CAs and no SASL", () => {
    const config = loadConfig({ KAFKA_SSL: "1" });
    expect(config.kafka.ssl).toEqual({ caFile: undefined, certFile: undefined, keyFile: undefined });
    expect(config.kafka.sasl).toBeUndefined();
  });

  it("lists every problem at once and never prints a password", () => {
    const problems = problemsOf({
      KAFKA_SSL_CA_FILE: join(dir, "missing.crt"),
      KAFKA_SSL_CERT_FILE: notPem,
      KAFKA_SASL_MECHANISM: "gssapi",
      KAFKA_SASL_PASSWORD: "hunter2-kafka",
      SCHEMA_REGISTRY_PASSWORD: "hunter2-registry",
      SCHEMA_REGISTRY_CA_FILE: pem,
      DATABASE_URL: "postgres://db/reflector?sslmode=disable",
      DATABASE_SSL_CA_FILE: pem,
      REDIS_URL: "redis://redis:6379/0",
      REDIS_TLS_CA_FILE: pem,
    });
    const text = problems.join("\n");
    for (const expected of [
      /^KAFKA_SSL_CA_FILE: cannot read .*missing\.crt \(ENOENT\)$/m,
      /^KAFKA_SSL_CERT_FILE: .*notes\.txt is not a PEM file$/m,
      /^KAFKA_SSL_CA_FILE: set, but KAFKA_SSL is not true$/m,
      /^KAFKA_SSL_CERT_FILE: set, but KAFKA_SSL is not true$/m,
      /^KAFKA_SSL_CERT_FILE: a client certificate needs both/m,
      /^KAFKA_SASL_MECHANISM: /m,
      /^KAFKA_SASL_USERNAME: KAFKA_SASL_MECHANISM is set/m,
      /^SCHEMA_REGISTRY_USERNAME: basic auth needs both/m,
      /^SCHEMA_REGISTRY_CA_FILE: set, but SCHEMA_REGISTRY_URL is not$/m,
      /^DATABASE_SSL_CA_FILE: set, but DATABASE_URL has sslmode=disable$/m,
      /^REDIS_TLS_CA_FILE: set, but REDIS_URL is not rediss:\/\/$/m,
    ]) {
      expect(text).toMatch(expected);
    }
    expect(text).not.toContain("hunter2");
  });

  it("wants a mechanism for a SASL user, and https for a registry CA", () => {
    const problems = problemsOf({
      KAFKA_SASL_USERNAME: "u",
      KAFKA_SASL_PASSWORD: "hunter2",
      SCHEMA_REGISTRY_URL: "http://registry:8081",
      SCHEMA_REGISTRY_CA_FILE: pem,
    });
    expect(problems).toEqual([
      "KAFKA_SASL_MECHANISM: KAFKA_SASL_USERNAME/PASSWORD are set but no mechanism is",
      "SCHEMA_REGISTRY_CA_FILE: set, but SCHEMA_REGISTRY_URL is not https://",
    ]);
  });

  it("refuses credentials that would cross the network in clear, unless allowed on purpose", () => {
    const cleartext = {
      KAFKA_SASL_MECHANISM: "plain",
      KAFKA_SASL_USERNAME: "reflector",
      KAFKA_SASL_PASSWORD: "hunter2-kafka",
      SCHEMA_REGISTRY_URL: "http://registry:8081/apis/ccompat/v7",
      SCHEMA_REGISTRY_USERNAME: "svc",
      SCHEMA_REGISTRY_PASSWORD: "hunter2-registry",
    };
    const problems = problemsOf(cleartext);
    expect(problems).toEqual([
      expect.stringMatching(
        /^KAFKA_SASL_MECHANISM: plain sends the password in clear without KAFKA_SSL=true/,
      ),
      expect.stringMatching(
        /^SCHEMA_REGISTRY_USERNAME: basic auth over http:\/\/ sends the password in clear/,
      ),
    ]);
    expect(problems.join("\n")).not.toContain("hunter2");
    // Over TLS, or with SCRAM (the password never crosses), nothing to refuse.
    expect(
      problemsOf({ ...cleartext, KAFKA_SSL: "true", SCHEMA_REGISTRY_URL: "https://registry:8081" }),
    ).toEqual([]);
    expect(
      problemsOf({
        ...cleartext,
        KAFKA_SASL_MECHANISM: "scram-sha-512",
        SCHEMA_REGISTRY_URL: "https://r:8081",
      }),
    ).toEqual([]);
    const lab = loadConfig({ ...cleartext, ALLOW_CLEARTEXT_CREDENTIALS: "true" });
    expect(lab.kafka.sasl?.mechanism).toBe("plain");
    expect(lab.http.allowCleartextApiKeys).toBe(true);
    expect(loadConfig({}).http.allowCleartextApiKeys).toBe(false);
  });
});
