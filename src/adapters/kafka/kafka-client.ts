import { readFileSync } from "node:fs";
import {
  Kafka,
  logLevel,
  type Admin,
  type AdminConfig,
  type Consumer,
  type ConsumerConfig,
  type KafkaConfig,
  type LogEntry,
  type Producer,
  type ProducerConfig,
  type SASLOptions,
} from "kafkajs";
import type { ConnectionOptions } from "node:tls";
import { ReflectorError } from "../../domain/errors.js";
import type { Logger } from "../../observability/logger.js";
import { stopIdleRequestQueuePolling } from "./request-queue-idle.js";

const levels: Record<number, "error" | "warn" | "info" | "debug"> = {
  [logLevel.ERROR]: "error",
  [logLevel.WARN]: "warn",
  [logLevel.INFO]: "info",
  [logLevel.DEBUG]: "debug",
};

/** TLS to the brokers: the CA that signed their certificates, and a client certificate if they ask for one. */
export interface KafkaTls {
  caFile?: string | undefined;
  certFile?: string | undefined;
  keyFile?: string | undefined;
}

export interface KafkaSasl {
  mechanism: "plain" | "scram-sha-256" | "scram-sha-512";
  username: string;
  password: string;
}

/** Where the brokers are and how to reach them: every Kafka client of the project is built from one. */
export interface KafkaConnection {
  brokers: string[];
  /** false = plaintext. */
  ssl: KafkaTls | false;
  sasl: KafkaSasl | undefined;
}

// Node's codes for a certificate it does not trust and for a handshake that cannot happen (the
// listener does not speak TLS, no common protocol): retrying them changes nothing.
const certificateCodes = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_SIGNATURE_FAILURE",
  "HOSTNAME_MISMATCH",
]);

function isTlsFailure(code: string): boolean {
  return certificateCodes.has(code) || code.startsWith("ERR_TLS_") || code.startsWith("ERR_SSL_");
}

/** The error and the errors it wraps (kafkajs nests them in `cause` and `originalError`). */
function chain(err: unknown): unknown[] {
  const seen: unknown[] = [];
  let current: unknown = err;
  while (typeof current === "object" && current !== null && !seen.includes(current) && seen.length < 10) {
    seen.push(current);
    const next = current as { cause?: unknown; originalError?: unknown };
    current = next.cause ?? next.originalError;
  }
  return seen;
}

/**
 * A refused password or an untrusted certificate as a ReflectorError that crashes start-up; null
 * for anything else (a broker still starting is retried as before). Never says the password.
 */
export function kafkaSecurityFailure(err: unknown, connection: KafkaConnection): ReflectorError | null {
  for (const link of chain(err)) {
    const { name, code, message } = link as { name?: unknown; code?: unknown; message?: unknown };
    const text = typeof message === "string" ? message : "";
    if (name === "KafkaJSSASLAuthenticationError" && connection.sasl) {
      const { mechanism, username } = connection.sasl;
      return new ReflectorError(
        "KAFKA_AUTH_FAILED",
        `Kafka refused the SASL credentials of user "${username}" (KAFKA_SASL_MECHANISM=${mechanism}): ${text}`,
        { cause: err },
      );
    }
    if (typeof code === "string" && isTlsFailure(code) && connection.ssl) {
      const ca = connection.ssl.caFile ? `KAFKA_SSL_CA_FILE=${connection.ssl.caFile}` : "the system's CAs";
      return new ReflectorError(
        "KAFKA_TLS_FAILED",
        `TLS to Kafka failed (${code}): the broker's certificate is not trusted by ${ca} or the listener does not speak TLS: ${text}`,
        { cause: err },
      );
    }
  }
  return null;
}

function tlsOptions(tls: KafkaTls): ConnectionOptions {
  return {
    rejectUnauthorized: true,
    ...(tls.caFile ? { ca: [readFileSync(tls.caFile)] } : {}),
    ...(tls.certFile ? { cert: readFileSync(tls.certFile) } : {}),
    ...(tls.keyFile ? { key: readFileSync(tls.keyFile) } : {}),
  };
}

function saslOptions(sasl: KafkaSasl): SASLOptions {
  const { username, password } = sasl;
  switch (sasl.mechanism) {
    case "plain":
      return { mechanism: "plain", username, password };
    case "scram-sha-256":
      return { mechanism: "scram-sha-256", username, password };
    case "scram-sha-512":
      return { mechanism: "scram-sha-512", username, password };
  }
}

/**
 * kafkajs retries every connection failure, and its SASL error only stops the call at hand: a wrong
 * password or an untrusted certificate would show as a slow retry loop. Before its first client
 * connects, this client makes one connection without retries and turns those two failures into
 * KAFKA_AUTH_FAILED / KAFKA_TLS_FAILED (action crash); any other failure is left to the client's
 * own retries.
 */
class CheckedKafka extends Kafka {
  #checked: Promise<void> | undefined;

  constructor(
    private readonly config: KafkaConfig,
    private readonly connection: KafkaConnection,
  ) {
    super(config);
  }

  override producer(config?: ProducerConfig): Producer {
    return this.#guard(super.producer(config));
  }

  override consumer(config: ConsumerConfig): Consumer {
    return this.#guard(super.consumer(config));
  }

  override admin(config?: AdminConfig): Admin {
    return this.#guard(super.admin(config));
  }

  /** Resolves once a connection has passed TLS and SASL; rejects with the ReflectorError if one cannot. */
  checkAccess(): Promise<void> {
    if (!this.connection.ssl && !this.connection.sasl) return Promise.resolve();
    this.#checked ??= this.#probe().then(
      (verified) => {
        // No broker answered: check again before the next client connects.
        if (!verified) this.#checked = undefined;
      },
      (err: unknown) => {
        this.#checked = undefined;
        throw err;
      },
    );
    return this.#checked;
  }

  /** True when a broker accepted TLS and SASL; false when none answered (a broker still starting). */
  async #probe(): Promise<boolean> {
    // A client of its own: the cluster's connection retries are the client's, not the admin's.
    const admin = new Kafka({ ...this.config, retry: { retries: 0 } }).admin();
    try {
      await admin.connect();
      return true;
    } catch (err) {
      const failure = kafkaSecurityFailure(err, this.connection);
      if (failure) throw failure;
      return false;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  }

  #guard<T extends { connect(): Promise<void> }>(client: T): T {
    const connect = client.connect.bind(client);
    client.connect = async () => {
      await this.checkAccess();
      try {
        await connect();
      } catch (err) {
        // A broker that came up after the check may still refuse: say so with the same codes.
        throw kafkaSecurityFailure(err, this.connection) ?? err;
      }
    };
    return client;
  }
}

/** Reflector's Kafka client, for the composition root to hold without naming the client library. */
export type KafkaClient = Kafka & { checkAccess(): Promise<void> };

/**
 * The one place a kafkajs client is built (kafkajs is unmaintained and stays behind this adapter):
 * TLS and SASL from the connection, logs through pino.
 */
export function createKafka(options: {
  connection: KafkaConnection;
  clientId: string;
  logger: Logger;
}): KafkaClient {
  stopIdleRequestQueuePolling();
  const { connection } = options;
  const kafkaLogger = options.logger.child({ component: "kafkajs" });
  return new CheckedKafka(
    {
      clientId: options.clientId,
      brokers: connection.brokers,
      ...(connection.ssl ? { ssl: tlsOptions(connection.ssl) } : {}),
      ...(connection.sasl ? { sasl: saslOptions(connection.sasl) } : {}),
      logLevel: logLevel.WARN,
      logCreator:
        () =>
        ({ level, log }: LogEntry) => {
          const { message, ...extra } = log;
          // Retried at once and expected right after each transaction commit: not an error.
          const text = JSON.stringify(log);
          const routine =
            text.includes("CONCURRENT_TRANSACTIONS") ||
            text.includes("concurrent operation on the same transaction");
          kafkaLogger[routine ? "debug" : (levels[level] ?? "info")](extra, message);
        },
      retry: { initialRetryTime: 200, retries: 8 },
    },
    connection,
  );
}
