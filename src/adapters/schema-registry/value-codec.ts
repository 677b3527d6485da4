import { readFileSync } from "node:fs";
import { get as httpGet, type Agent } from "node:http";
import { Agent as HttpsAgent, get as httpsGet } from "node:https";
import { SchemaRegistry, SchemaType } from "@kafkajs/confluent-schema-registry";
import type { ContractName } from "../../domain/contracts/index.js";
import { jsonSchemaFor } from "../../domain/contracts/json-schema.js";
import { ReflectorError } from "../../domain/errors.js";
import type { ValueCodec } from "../../pipeline/ports.js";

const MAGIC_BYTE = 0;

function decodeJson(value: Buffer): unknown {
  try {
    return JSON.parse(value.toString("utf8"));
  } catch (err) {
    throw new ReflectorError("DECODE_FAILED", `value is not JSON: ${(err as Error).message}`, { cause: err });
  }
}

function isWireFormat(value: Buffer): boolean {
  return value.length > 5 && value[0] === MAGIC_BYTE;
}

export function createJsonCodec(): ValueCodec {
  return {
    format: "json",
    decode: (value) => {
      if (isWireFormat(value)) {
        throw new ReflectorError(
          "DECODE_FAILED",
          "value is in the Confluent wire format but no SCHEMA_REGISTRY_URL is configured",
        );
      }
      return Promise.resolve(decodeJson(value));
    },
    encode: (_topic, _contract, value) => Promise.resolve(Buffer.from(JSON.stringify(value), "utf8")),
  };
}

/** Where the registry is and how to reach it: basic auth and the CA of a private PKI, both optional. */
export interface RegistryConnection {
  url: string;
  username?: string | undefined;
  password?: string | undefined;
  /** PEM bundle that signed an https registry's certificate. */
  caFile?: string | undefined;
}

/** GET `url` with the registry's auth and agent; resolves to the HTTP status. */
function statusOf(
  url: string,
  options: { agent: Agent | undefined; auth: string | undefined },
): Promise<number> {
  const get = url.startsWith("https:") ? httpsGet : httpGet;
  return new Promise((resolve, reject) => {
    const request = get(
      url,
      {
        signal: AbortSignal.timeout(2000),
        ...(options.agent ? { agent: options.agent } : {}),
        ...(options.auth ? { auth: options.auth } : {}),
      },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    request.on("error", reject);
  });
}

/**
 * With a registry, values are written in the wire format (magic byte, schema id, JSON) under
 * subject `<topic>-value`; both forms are read, so producers can migrate one at a time.
 */
export function createRegistryCodec(connection: RegistryConnection): ValueCodec {
  const host = connection.url;
  const auth =
    connection.username !== undefined && connection.password !== undefined
      ? { username: connection.username, password: connection.password }
      : undefined;
  const agent = connection.caFile
    ? new HttpsAgent({ ca: readFileSync(connection.caFile, "utf8"), keepAlive: true })
    : undefined;
  // Validation is the zod contract's job; the registry client's ajv is told not to fail on formats.
  const registry = new SchemaRegistry(
    { host, ...(auth ? { auth } : {}), ...(agent ? { agent } : {}) },
    { [SchemaType.JSON]: { strict: false, validateFormats: false } },
  );
  const ids = new Map<string, Promise<number>>();

  const schemaId = (topic: string, contract: ContractName): Promise<number> => {
    const subject = `${topic}-value`;
    let id = ids.get(subject);
    if (!id) {
      id = registry
        .register({ type: SchemaType.JSON, schema: JSON.stringify(jsonSchemaFor(contract)) }, { subject })
        .then((r) => r.id)
        .catch((err: unknown) => {
          ids.delete(subject);
          throw new ReflectorError(
            "REGISTRY_UNAVAILABLE",
            `registering ${subject}: ${(err as Error).message}`,
            {
              cause: err,
            },
          );
        });
      ids.set(subject, id);
    }
    return id;
  };

  return {
    format: "confluent-json",
    decode: async (value) => {
      if (!isWireFormat(value)) return decodeJson(value);
      try {
        return (await registry.decode(value)) as unknown;
      } catch (err) {
        const message = (err as Error).message;
        const unreachable = registryUnavailable(err);
        throw new ReflectorError(
          unreachable ? "REGISTRY_UNAVAILABLE" : "DECODE_FAILED",
          `wire-format value could not be decoded: ${message}`,
          { cause: err },
        );
      }
    },
    encode: async (topic, contract, value) => registry.encode(await schemaId(topic, contract), value),
    check: async () => {
      const status = await statusOf(`${withoutTrailingSlashes(host)}/subjects`, {
        agent,
        auth: auth ? `${auth.username}:${auth.password}` : undefined,
      });
      return status >= 200 && status < 300;
    },
  };
}

/** `url` without trailing slashes (a loop: `/\/+$/` backtracks quadratically over a run of them). */
function withoutTrailingSlashes(url: string): string {
  let end = url.length;
  while (end > 0 && url[end - 1] === "/") end -= 1;
  return url.slice(0, end);
}

/**
 * Whether a registry failure is an outage (retry, pause) rather than a value it cannot decode
 * (dead-letter): by the HTTP status when there is one (5xx, 429 and 408 are outages, and so are
 * 401 and 403: refused credentials hold the partition rather than dead-letter every wire-format
 * value; a 404 for an unknown schema id is not), else by the transport error (TLS included). Never by digits in the message, which
 * the registry's body may contain ("schema 555 not found").
 */
export function registryUnavailable(err: unknown): boolean {
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === "number") return status >= 500 || [401, 403, 408, 429].includes(status);
  const code = (err as { code?: unknown } | null)?.code;
  if (
    typeof code === "string" &&
    (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|EPIPE)$/.test(code) ||
      /CERT|^ERR_TLS_|^ERR_SSL_/.test(code))
  )
    return true;
  const message = err instanceof Error ? err.message : String(err);
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|socket hang up|network|fetch failed/i.test(message);
}
