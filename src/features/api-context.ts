import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RawServerDefault,
} from "fastify";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ZodTypeProvider } from "fastify-type-provider-zod";
import { z } from "zod";
import type { ApiRole } from "../config/api-keys-setting.js";

/**
 * What the features' routes share: the Fastify scope they register on (zod schemas validate
 * requests and document them in the OpenAPI document), the caller's tenant and roles, and the
 * error answers every route may give.
 */

export type ApiScope = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>;

export interface ApiContext {
  /** The tenant of the request's API key; the only source of a tenant. */
  tenantOf(request: FastifyRequest): string;
  /** Refuses (403) a request whose key lacks a further role its body asks for. */
  requireRole(request: FastifyRequest, role: ApiRole): void;
  /** Whether the caller's key has the role (for a route that does more for some keys). */
  hasRole(request: FastifyRequest, role: ApiRole): boolean;
  /**
   * A token bucket per key (`perMinute` a minute, in memory, per process) for a route to bound
   * what a caller makes it do: `take` answers null when taken, else the seconds to wait.
   */
  rateLimit(perMinute: number): { take(key: string, amount?: number): number | null };
  /** The request's API key as a rate is counted under it: hashed, never kept as it is. */
  keyOf(request: FastifyRequest): string;
}

/** The route table of a feature: the role each of its routes needs ("METHOD /url"). */
export type RouteRoles = Readonly<Record<string, ApiRole>>;

export class Forbidden extends Error {
  constructor(role: ApiRole) {
    super(`this API key may not ${role}`);
  }
}

/**
 * An error answer: RFC 9457 problem details (`application/problem+json`), with the keys the API
 * answered before them (`error`, `message`, `issues`) in the same object. Open: a route may add
 * keys of its own (the signature look-up's `seen_before`, a split's `missing`).
 */
export const ProblemJson = z
  .looseObject({
    type: z
      .string()
      .describe("a URI reference naming the kind of problem (docs/error-codes.md#http-problems)"),
    title: z.string().describe("the kind's short summary, the same for every problem of the kind"),
    status: z.number().int().min(400).max(599),
    detail: z.string().describe("what went wrong with this request"),
    instance: z.string().describe("the request's path"),
    error: z.string().describe("the kind as a snake_case code (kept from before problem details)"),
    message: z.string().describe("the same text as `detail` (kept from before problem details)"),
    issues: z.array(z.string()).optional().describe("each offending field with its place (400)"),
  })
  .meta({ id: "Problem" });

const problem = (description: string): z.ZodType => ProblemJson.describe(description);

/** Options of `answers`: whether the route reads a body (then 413 and 415 may answer). */
export interface AnswerOptions {
  body?: boolean;
}

/**
 * The documented answers of an authenticated route: its successes (each status with its schema),
 * the errors any route may give and the route's own (`errors`: a description, answered as a
 * problem, or a schema of their own). Every status a route can answer has a schema here; the
 * response check of the tests (`src/http/response-check.ts`) holds the answers to them.
 */
export function answers(
  ok: Record<number, z.ZodType>,
  errors: Record<number, string | z.ZodType> = {},
  options: AnswerOptions = {},
): Record<number, z.ZodType> {
  const documented: Record<number, z.ZodType> = {
    400: problem("invalid request: `issues` names every offending field"),
    401: problem("no or unknown API key (`WWW-Authenticate: Bearer`)"),
    403: problem("the API key lacks the role this route needs, or was sent over plain HTTP"),
    429: problem(
      "too many unknown API keys from this address, or too many requests: retry after `Retry-After` seconds",
    ),
    500: problem("a bug (logged; the answer says no more)"),
    503: problem("a dependency is unavailable: retry after `Retry-After` seconds"),
  };
  if (options.body) {
    documented[413] = problem("the body is larger than the route takes");
    documented[415] = problem("the body's media type is not one the route takes (send `application/json`)");
  }
  for (const [status, schema] of Object.entries(ok)) documented[Number(status)] = schema;
  for (const [status, error] of Object.entries(errors))
    documented[Number(status)] = typeof error === "string" ? problem(error) : error;
  return documented;
}

export const notFoundForTenant = "not found for this tenant (another tenant's ids look absent)";

export const bearer = [{ bearer: [] }];

/**
 * The end of the deprecation period of the spellings `/api/v1` accepted before it settled on one
 * style (camelCase on lessons for a task, `k` for `limit`): they are removed in the first release
 * after this date (docs/api.md#deprecations).
 */
export const deprecatedSpellingsSunset = "Sat, 05 Jun 2027 00:00:00 GMT";

/**
 * Marks an answer given to a deprecated spelling: `Deprecation: true`, the `Sunset` date and a
 * link to the deprecations (RFC 8594 and the deprecation header's `rel="deprecation"` link).
 */
export function markDeprecated(reply: FastifyReply): void {
  void reply
    .header("deprecation", "true")
    .header("sunset", deprecatedSpellingsSunset)
    .header("link", '</docs#deprecations>; rel="deprecation"; type="text/html"');
}
