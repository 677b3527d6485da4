import { readFileSync } from "node:fs";
import type { ClientConfig } from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { pgTypes } from "./pg-types.js";

/** Where Postgres is: the URL (credentials and `sslmode` included) and the CA of a private PKI. */
export interface PgConnection {
  databaseUrl: string;
  /** PEM bundle that signed the server's certificate; turns TLS on when the URL does not say `sslmode`. */
  sslCaFile: string | undefined;
}

/**
 * The client settings of every pg Pool and Client Reflector builds. pg lets a connection string's
 * `ssl` replace the `ssl` given next to it, so the URL is parsed here and the CA added to what it says:
 * `sslmode=verify-full` (or `require`, which pg treats the same) verifies certificate and host name;
 * `sslmode=no-verify` encrypts without verifying; `sslmode=disable` is plaintext.
 */
export function pgClientConfig(
  connection: PgConnection,
  overrides: { database?: string } = {},
): ClientConfig {
  const config: ClientConfig = {
    ...parseIntoClientConfig(connection.databaseUrl),
    types: pgTypes,
  };
  if (overrides.database !== undefined) config.database = overrides.database;
  if (connection.sslCaFile && config.ssl !== false) {
    const ca = readFileSync(connection.sslCaFile, "utf8");
    config.ssl = { ...(typeof config.ssl === "object" ? config.ssl : {}), ca };
  }
  return config;
}
