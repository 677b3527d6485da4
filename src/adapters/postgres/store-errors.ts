import { ReflectorError } from "../../domain/errors.js";

/**
 * SQLSTATE classes that mean Postgres refused the data it was given, not that it is away: data
 * exceptions (22: a NUL byte or a lone surrogate in text, a number out of range, bad encoding),
 * integrity violations (23) and program limits (54: an index row or a search vector too large).
 * Retrying cannot help and waiting for an outage to end would wait for ever.
 */
const dataRefused = /^(22|23|54)/;
/** Syntax and undefined objects (42): a bug in this code or a schema behind it. */
const bugClass = "42";

/**
 * The Postgres adapter's edge: names a failure for the one classifier. DATA_REJECTED (dead-letter,
 * with Postgres's reason), the error as it is for a bug (crash), or STORE_UNAVAILABLE (an outage:
 * pause and retry) for everything else: a connection refused or reset (errno), the server shutting
 * down or refusing connections (57P01, 57P03, 53300), a serialization failure or deadlock (40001,
 * 40P01), which may all pass on retry.
 */
export function storeError(err: unknown): unknown {
  // Already named (an invariant of this adapter's own): kept as it is.
  if (err instanceof ReflectorError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code === "string" && dataRefused.test(code)) {
    return new ReflectorError("DATA_REJECTED", `postgres refused the event's data (${code}): ${message}`, {
      cause: err,
    });
  }
  if (typeof code === "string" && code.startsWith(bugClass)) return err;
  return new ReflectorError("STORE_UNAVAILABLE", `postgres: ${message}`, { cause: err });
}

/** Runs a store call, its failure mapped by `storeError`. */
export async function withStoreErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw storeError(err);
  }
}
