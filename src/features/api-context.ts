import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, RawServerDefault } from "fastify";
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

const ErrorJson = (description: string) =>
  z.looseObject({ error: z.string(), message: z.string() }).describe(description);

/**
 * The documented answers of an authenticated route: its successes (`ok`: a description, or one
 * per status), the errors any route may give and the route's own (`errors`). Objects stay open:
 * the schemas document the answers, they do not trim them.
 */
export function answers(
  ok: string | Record<number, string>,
  errors: Record<number, string> = {},
): Record<number, z.ZodType> {
  const documented: Record<number, z.ZodType> = {
    400: ErrorJson("invalid request: `issues` names every offending field"),
    401: ErrorJson("no or unknown API key"),
    403: ErrorJson("the API key lacks the role this route needs"),
    503: ErrorJson("a dependency is unavailable; retry later"),
  };
  for (const [status, description] of Object.entries(typeof ok === "string" ? { 200: ok } : ok)) {
    documented[Number(status)] = z.looseObject({}).describe(description);
  }
  for (const [status, description] of Object.entries(errors))
    documented[Number(status)] = ErrorJson(description);
  return documented;
}

export const notFoundForTenant = "not found for this tenant (another tenant's ids look absent)";

export const bearer = [{ bearer: [] }];
