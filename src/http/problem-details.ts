import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";

/**
 * RFC 9457 problem details for every error the app answers: whoever wrote the answer (a route,
 * authentication, the error handler, Fastify itself), a 4xx or 5xx with a JSON body leaves as
 * `application/problem+json` with `type`, `title`, `status`, `detail` and `instance`, beside
 * the keys the API answered before (`error`, `message`, `issues`), so older clients read it as
 * they did. docs/error-codes.md#http-problems lists the types.
 */

/** The problem types, by status: the URI reference (relative, resolved against the API's base) and its title. */
export const problemTypes: Readonly<Record<number, { slug: string; title: string; error: string }>> = {
  400: { slug: "validation", title: "The request is invalid", error: "bad_request" },
  401: { slug: "unauthorized", title: "No or unknown API key", error: "unauthorized" },
  403: { slug: "forbidden", title: "The API key may not do this", error: "forbidden" },
  404: { slug: "not-found", title: "Not found", error: "not_found" },
  405: { slug: "method-not-allowed", title: "Method not allowed", error: "method_not_allowed" },
  406: { slug: "not-acceptable", title: "Not acceptable", error: "not_acceptable" },
  408: { slug: "request-timeout", title: "The request took too long to arrive", error: "request_timeout" },
  409: { slug: "conflict", title: "The request conflicts with stored state", error: "conflict" },
  413: { slug: "payload-too-large", title: "The body is too large", error: "payload_too_large" },
  414: { slug: "uri-too-long", title: "The URI is too long", error: "uri_too_long" },
  415: {
    slug: "unsupported-media-type",
    title: "The body's media type is not accepted",
    error: "unsupported_media_type",
  },
  429: { slug: "rate-limited", title: "Too many requests", error: "too_many_requests" },
  500: { slug: "internal", title: "Internal error", error: "internal" },
  502: { slug: "bad-gateway", title: "Bad gateway", error: "bad_gateway" },
  503: { slug: "unavailable", title: "A dependency is unavailable", error: "unavailable" },
  504: { slug: "deadline-exceeded", title: "The deadline passed", error: "deadline_exceeded" },
};

/** Where the problem types' documentation is: `type` is this plus the slug. */
export const problemTypeBase = "/problems/";

export const problemContentType = "application/problem+json; charset=utf-8";

function kindOf(status: number) {
  return problemTypes[status] ?? (status >= 500 ? problemTypes[500] : problemTypes[400]);
}

/** A snake_case code as the API has always written `error` (Fastify's own say "Bad Request"). */
const snakeCode = /^[a-z][a-z0-9_]*$/;

/**
 * The problem-details object for an error body: its keys kept, the problem's added. `detail` is
 * the body's `message` (or the title when it has none); `instance` the request's path.
 */
export function problemOf(
  status: number,
  body: Record<string, unknown>,
  path: string,
): Record<string, unknown> {
  const kind = kindOf(status);
  const message = typeof body.message === "string" && body.message !== "" ? body.message : kind?.title;
  const { statusCode: _statusCode, ...kept } = body;
  return {
    type: `${problemTypeBase}${kind?.slug ?? "internal"}`,
    title: kind?.title ?? "Error",
    status,
    detail: message,
    instance: path,
    ...kept,
    error: typeof body.error === "string" && snakeCode.test(body.error) ? body.error : kind?.error,
    message,
  };
}

function pathOf(request: FastifyRequest): string {
  return request.url.split("?")[0] ?? "/";
}

/**
 * Answers that follow another specification: OTLP/HTTP answers a `google.rpc.Status`; `/readyz`'s
 * 503 is the readiness report a probe reads (`status: "not_ready"` with the failed checks).
 */
const ownErrorFormat = new Set(["/v1/traces", "/readyz"]);

function isJson(reply: FastifyReply): boolean {
  const type = reply.getHeader("content-type");
  return type === undefined || /json/i.test(String(type));
}

/**
 * Turns every JSON error answer into problem details; registered on the root instance so it sees
 * the answers of every route, of the not-found handler and of Fastify's own error handler.
 */
export function answerProblems(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply, payload) => {
    if (reply.statusCode < 400 || ownErrorFormat.has(request.routeOptions.url ?? "")) return payload;
    if (payload === undefined || payload === null || payload === "") {
      void reply.header("content-type", problemContentType);
      return JSON.stringify(problemOf(reply.statusCode, {}, pathOf(request)));
    }
    if (typeof payload !== "string" || !isJson(reply)) return payload;
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      return payload;
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) return payload;
    void reply.header("content-type", problemContentType);
    return JSON.stringify(problemOf(reply.statusCode, body as Record<string, unknown>, pathOf(request)));
  });
}
