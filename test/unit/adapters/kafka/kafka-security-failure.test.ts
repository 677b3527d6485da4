import { KafkaJSConnectionError, KafkaJSSASLAuthenticationError } from "kafkajs";
import { describe, expect, it } from "vitest";
import { kafkaSecurityFailure, type KafkaConnection } from "../../../../src/adapters/kafka/kafka-client.js";

const secured: KafkaConnection = {
  brokers: ["kafka:9094"],
  ssl: { caFile: "/etc/reflector/tls/ca.crt" },
  sasl: { mechanism: "scram-sha-512", username: "reflector", password: "do-not-leak" },
};

// kafkajs' typings give this error a constructor without arguments; the class takes a message.
const SaslError = KafkaJSSASLAuthenticationError as unknown as new (message: string) => Error;

describe("kafkaSecurityFailure", () => {
  it("turns a refused SASL login into KAFKA_AUTH_FAILED naming user and mechanism, not the password", () => {
    const failure = kafkaSecurityFailure(new SaslError("SASL SCRAM SHA512 authentication failed"), secured);
    expect(failure?.code).toBe("KAFKA_AUTH_FAILED");
    expect(failure?.message).toContain('user "reflector"');
    expect(failure?.message).toContain("scram-sha-512");
    expect(failure?.message).not.toContain("do-not-leak");
    expect(failure?.retryable).toBe(false);
  });

  it("finds an untrusted certificate under kafkajs' retry wrapper", () => {
    const tls = new KafkaJSConnectionError("Connection error: self-signed certificate in certificate chain", {
      broker: "kafka:9094",
      code: "SELF_SIGNED_CERT_IN_CHAIN",
    });
    // What kafkajs' retrier throws in the end: the last error as `originalError`.
    const wrapped = Object.assign(new Error("Number of retries exceeded"), {
      name: "KafkaJSNumberOfRetriesExceeded",
      originalError: tls,
    });
    const failure = kafkaSecurityFailure(wrapped, secured);
    expect(failure?.code).toBe("KAFKA_TLS_FAILED");
    expect(failure?.message).toContain("SELF_SIGNED_CERT_IN_CHAIN");
    expect(failure?.message).toContain("/etc/reflector/tls/ca.crt");
    const plainListener = new KafkaJSConnectionError("Connection error", {
      code: "ERR_SSL_WRONG_VERSION_NUMBER",
    });
    expect(kafkaSecurityFailure(plainListener, secured)?.code).toBe("KAFKA_TLS_FAILED");
  });

  it("leaves every other failure to the client's retries", () => {
    const refused = new KafkaJSConnectionError("Connection error: connect ECONNREFUSED", {
      code: "ECONNREFUSED",
    });
    expect(kafkaSecurityFailure(refused, secured)).toBeNull();
    expect(kafkaSecurityFailure(new Error("boom"), secured)).toBeNull();
    expect(kafkaSecurityFailure(undefined, secured)).toBeNull();
    // Without TLS configured a certificate code cannot be ours to report.
    const tls = new KafkaJSConnectionError("x", { code: "CERT_HAS_EXPIRED" });
    expect(kafkaSecurityFailure(tls, { ...secured, ssl: false })).toBeNull();
  });
});
