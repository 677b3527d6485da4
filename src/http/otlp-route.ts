import { createGunzip } from "node:zlib";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { classifyFailure, ReflectorError } from "../domain/errors.js";
import type { Logger } from "../observability/logger.js";
import { z } from "zod";
import { bearer, type ApiContext, type ApiScope, type RouteRoles } from "../features/api-context.js";
import { encodeStatus, rpcCodeOf, type OtlpStatus } from "./otlp-status.js";
import { createRateLimit, credentialOf } from "./rate-limit.js";

/**
 * OTLP over HTTP (`POST /v1/traces`), as an OpenTelemetry SDK's OTLP/HTTP exporter sends it:
 * `application/x-protobuf` or `application/json`, gzip or not, with the API key as a bearer
 * token. The request is handed to the same path as the Kafka OTLP topic (docs/otlp-ingest.md).
 */

export type OtlpBodyEncoding = "json" | "protobuf";

export type OtlpAcceptance =
  | { ok: true; spans: number }
  /**
   * The request is refused as a whole: a resource names another tenant, or the bridge serves
   * another (403); it is over a bound (413); the tenant sent more spans than its rate (429).
   */
  | { ok: false; status: 403 | 413; message: string }
  | { ok: false; status: 429; message: string; retryAfterSeconds: number };

/** Where accepted requests go; resolves once they are durable (the brokers acknowledged them). */
export interface OtlpHttpIngest {
  /** Throws DECODE_FAILED or SCHEMA_INVALID for a body that is not an OTLP trace export. */
  accept(tenantId: string, body: Buffer, encoding: OtlpBodyEncoding): Promise<OtlpAcceptance>;
  /** The largest request body taken, after gzip is undone (a larger one is answered 413). */
  readonly maxBodyBytes: number;
  /** Requests one API key may send a minute (`OTLP_HTTP_REQUESTS_PER_MINUTE`); more get 429. */
  readonly requestsPerMinute?: number;
  /** Counts accepted spans and refused requests (metrics). */
  observe?(result: "accepted" | "refused", spans: number): void;
}

export interface OtlpRouteDeps {
  /** Null when the OTLP bridge does not run (OTLP_TOPIC unset): the route answers 404 and says why. */
  ingest: OtlpHttpIngest | null;
  logger?: Pick<Logger, "warn" | "error">;
  /** The clock of the tenants' refusals (ms since the epoch). */
  now?: () => number;
}

export const otlpRouteRoles: RouteRoles = {
  // Sending a trace has it judged and its loop decided: the role that reports a finished loop.
  "POST /v1/traces": "decide",
};

const protobufType = "application/x-protobuf";
const jsonType = "application/json";

const mediaTypeOf = (request: FastifyRequest) =>
  (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();

function encodingOf(request: FastifyRequest): OtlpBodyEncoding {
  return mediaTypeOf(request) === jsonType ? "json" : "protobuf";
}

/** The message of an error body this server wrote (`{ error, message }`), or the body itself. */
function messageOf(payload: unknown): string {
  const text = Buffer.isBuffer(payload)
    ? payload.toString("utf8")
    : typeof payload === "string"
      ? payload
      : "";
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // not JSON: the text is the message
  }
  return text;
}

/**
 * Every error answer of the route, whoever wrote it (this route, authentication, Fastify), as the
 * OTLP/HTTP specification asks: a `google.rpc.Status` in the request's encoding. A request that
 * is neither encoding (a 415) gets the JSON form.
 */
function statusBody(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
  const status: OtlpStatus = { code: rpcCodeOf(reply.statusCode), message: messageOf(payload) };
  if (mediaTypeOf(request) === protobufType) {
    void reply.header("content-type", protobufType);
    return encodeStatus(status);
  }
  void reply.header("content-type", "application/json; charset=utf-8");
  return JSON.stringify(status);
}

function errorReply(reply: FastifyReply, status: number, error: string, message: string) {
  return reply.code(status).send({ error, message });
}

/** The OTLP success answer: an empty `ExportTraceServiceResponse` in the request's encoding. */
function success(reply: FastifyReply, encoding: OtlpBodyEncoding) {
  if (encoding === "json") return reply.code(200).send({});
  return reply.code(200).header("content-type", protobufType).send(Buffer.alloc(0));
}

/** The gzip'd body undone as it streams, so the body limit counts the bytes it expands to. */
function gunzipped(payload: NodeJS.ReadableStream) {
  const gunzip = createGunzip() as ReturnType<typeof createGunzip> & { receivedEncodedLength: number };
  gunzip.receivedEncodedLength = 0;
  payload.on("data", (chunk: Buffer) => {
    gunzip.receivedEncodedLength += chunk.length;
  });
  payload.on("error", (err: Error) => gunzip.destroy(err));
  return payload.pipe(gunzip);
}

class HttpRefusal extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/**
 * The tenants the ingest refused for their volume (spans or new traces a minute), each until its
 * Retry-After: until then their requests are refused before their bodies are read, since parsing
 * one costs a worker thread's time whether it is then refused or not. Per process; at most one
 * entry per tenant, and the keyring bounds the tenants.
 */
function createTenantRefusals(now: () => number) {
  const refused = new Map<string, { until: number; reason: string }>();
  return {
    /** The seconds the tenant must still wait, with why; null when it is not refused. */
    check(tenantId: string): { wait: number; reason: string } | null {
      const entry = refused.get(tenantId);
      if (!entry) return null;
      const wait = Math.ceil((entry.until - now()) / 1000);
      if (wait > 0) return { wait, reason: entry.reason };
      refused.delete(tenantId);
      return null;
    },
    refuse(tenantId: string, retryAfterSeconds: number, message: string): void {
      refused.set(tenantId, {
        until: now() + retryAfterSeconds * 1000,
        reason: message.replace(/: retry in \d+ s$/, ""),
      });
    },
  };
}

/** The request's tenant, or null when it has none (not authenticated: the route refuses it). */
function tenantOrNull(ctx: ApiContext, request: FastifyRequest): string | null {
  try {
    return ctx.tenantOf(request);
  } catch {
    return null;
  }
}

/**
 * As the OTLP/HTTP specification has them: an empty `ExportTraceServiceResponse`, and every error
 * a `google.rpc.Status` (JSON here; protobuf for a protobuf request), not problem details.
 */
const RpcStatus = (description: string) =>
  z
    .object({ code: z.number().int(), message: z.string(), details: z.array(z.unknown()).optional() })
    .describe(description);
const otlpErrors: Record<number, string> = {
  400: "not an OTLP trace export, or not valid gzip",
  401: "no or unknown API key",
  403: "the API key lacks the decide role, or a resource names another tenant",
  404: "the OTLP bridge does not run here (OTLP_TOPIC unset)",
  413: "the request is larger than the limit, or holds more spans than a request may",
  415: "not application/x-protobuf or application/json, or an encoding other than gzip",
  429: "the API key's requests, or the tenant's spans, are over their rate: retry after `Retry-After` seconds",
  500: "a bug (logged)",
  503: "the OTLP topic is unavailable: retry after `Retry-After` seconds",
};
const otlpAnswers: Record<number, z.ZodType> = {
  200: z.object({}).describe("an empty ExportTraceServiceResponse"),
  ...Object.fromEntries(Object.entries(otlpErrors).map(([status, text]) => [status, RpcStatus(text)])),
};

export function registerOtlpRoute(scope: ApiScope, deps: OtlpRouteDeps, ctx: ApiContext): void {
  const { ingest } = deps;
  const refusals = createTenantRefusals(deps.now ?? (() => Date.now()));
  // Without the bridge a body is refused unread, whatever its size: a small limit.
  const limit = ingest?.maxBodyBytes ?? 1_024;
  const perKey = ingest?.requestsPerMinute ? createRateLimit({ perMinute: ingest.requestsPerMinute }) : null;
  void scope.register((otlp, _options, done) => {
    // Only the two OTLP encodings, read as bytes (the JSON is parsed by the OTLP decoder).
    otlp.removeAllContentTypeParsers();
    otlp.addContentTypeParser(
      [protobufType, jsonType],
      { parseAs: "buffer", bodyLimit: limit },
      (_request, body, parsed) => {
        parsed(null, body);
      },
    );
    otlp.addHook("onSend", async (request, reply, payload) =>
      reply.statusCode >= 400 ? statusBody(request, reply, payload) : payload,
    );
    otlp.addHook("preParsing", async (request, _reply, payload) => {
      // Counted before the body is read: a key over its rate costs no parsing at all.
      const wait = perKey?.take(credentialOf(request)) ?? null;
      if (wait !== null) {
        throw new HttpRefusal(
          429,
          `this API key sent more than ${String(ingest?.requestsPerMinute)} OTLP requests a minute: retry in ${String(wait)} s`,
          wait,
        );
      }
      // A tenant refused for its volume is refused unread until its Retry-After.
      const tenant = tenantOrNull(ctx, request);
      const refused = tenant === null ? null : refusals.check(tenant);
      if (refused)
        throw new HttpRefusal(429, `${refused.reason}: retry in ${String(refused.wait)} s`, refused.wait);
      const coding = (request.headers["content-encoding"] ?? "identity").trim().toLowerCase();
      if (coding === "identity" || coding === "") return payload;
      if (coding === "gzip") return gunzipped(payload);
      throw new HttpRefusal(415, `content-encoding ${coding} is not accepted: send gzip or no encoding`);
    });

    otlp.setErrorHandler(async (err: FastifyError, request, reply) => {
      const code = err.code;
      if (code === "FST_ERR_CTP_BODY_TOO_LARGE" || err.statusCode === 413) {
        ingest?.observe?.("refused", 0);
        return errorReply(
          reply,
          413,
          "payload_too_large",
          `an OTLP request may hold at most ${String(limit)} bytes (after gzip is undone): export smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)`,
        );
      }
      if (err instanceof HttpRefusal && err.statusCode === 429) {
        ingest?.observe?.("refused", 0);
        return reply
          .code(429)
          .header("retry-after", String(err.retryAfterSeconds ?? 1))
          .send({ error: "too_many_requests", message: err.message });
      }
      if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" || err.statusCode === 415) {
        return errorReply(
          reply,
          415,
          "unsupported_media_type",
          err instanceof HttpRefusal
            ? err.message
            : `content-type ${request.headers["content-type"] ?? "(none)"} is not accepted: send ${protobufType} or ${jsonType}`,
        );
      }
      if (typeof code === "string" && code.startsWith("Z_")) {
        return errorReply(reply, 400, "bad_request", `the body is not valid gzip: ${err.message}`);
      }
      if (err instanceof ReflectorError && (err.code === "DECODE_FAILED" || err.code === "SCHEMA_INVALID")) {
        ingest?.observe?.("refused", 0);
        return errorReply(reply, 400, "bad_request", err.message);
      }
      if (typeof err.statusCode === "number" && err.statusCode >= 400 && err.statusCode < 500) {
        return errorReply(reply, err.statusCode, "bad_request", err.message);
      }
      // Kafka away: OTLP exporters retry a 503 (with its Retry-After), so nothing is lost. The
      // broker's own words (addresses, topic internals) are logged, never sent to the client.
      if (classifyFailure(err) === "retry") {
        deps.logger?.warn({ err }, "otlp request not accepted: kafka unavailable");
        return reply
          .code(503)
          .header("retry-after", "5")
          .send({ error: "unavailable", message: "the OTLP topic is unavailable; retry later" });
      }
      deps.logger?.error({ err }, "otlp request failed");
      return errorReply(reply, 500, "internal", "internal error");
    });

    otlp.post(
      "/v1/traces",
      {
        bodyLimit: limit,
        schema: {
          summary: "OTLP/HTTP trace export (protobuf or JSON, gzip accepted); the tenant is the API key's",
          operationId: "exportTraces",
          tags: ["otlp"],
          security: bearer,
          response: otlpAnswers,
        },
      },
      async (request, reply) => {
        const tenantId = ctx.tenantOf(request);
        if (ingest === null) {
          return errorReply(
            reply,
            404,
            "not_found",
            "OTLP over HTTP is served when the OTLP bridge runs: set OTLP_TOPIC (docs/otlp-ingest.md)",
          );
        }
        const encoding = encodingOf(request);
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const accepted = await ingest.accept(tenantId, body, encoding);
        if (!accepted.ok) {
          ingest.observe?.("refused", 0);
          if (accepted.status === 429) {
            refusals.refuse(tenantId, accepted.retryAfterSeconds, accepted.message);
            void reply.header("retry-after", String(accepted.retryAfterSeconds));
            return errorReply(reply, 429, "too_many_requests", accepted.message);
          }
          const error = accepted.status === 403 ? "forbidden" : "payload_too_large";
          return errorReply(reply, accepted.status, error, accepted.message);
        }
        ingest.observe?.("accepted", accepted.spans);
        return success(reply, encoding);
      },
    );
    done();
  });
}
