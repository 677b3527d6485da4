import { errorMessage, failureOf, ReflectorError, type Failure } from "../../domain/errors.js";

// Node's socket errors: the connection, not the event, failed; each may pass on retry.
const socketErrnos = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
]);

/**
 * The Kafka adapter's edge for failures no adapter named: a socket error (by its errno), an error
 * kafkajs marks `retriable`, or one whose message speaks of a connection, a socket or a timeout
 * becomes `TRANSPORT` (an outage: the consumer pauses and retries). Anything else is returned as
 * it is, and the one classifier (`failureOf`) calls it a bug. Postgres' SQLSTATEs are named by its
 * own adapter (../postgres/store-errors.ts), Redis' failures by the Redis adapter.
 */
export function transportFailure(err: unknown): unknown {
  if (err instanceof ReflectorError || typeof err !== "object" || err === null) return err;
  const code = (err as { code?: unknown }).code;
  const retriable = (err as { retriable?: unknown }).retriable === true;
  const connectionLike = err instanceof Error && /connection|connect|socket|timeout/i.test(err.message);
  if ((typeof code === "string" && socketErrnos.has(code)) || retriable || connectionLike) {
    return new ReflectorError("TRANSPORT", errorMessage(err), { cause: err });
  }
  return err;
}

/** The one classification of a failed attempt at a consumed record: `{action, code, kind}`. */
export function classify(err: unknown): Failure {
  return failureOf(transportFailure(err));
}
