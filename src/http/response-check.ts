import { isDeepStrictEqual } from "node:util";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { problemContentType, problemTypeBase } from "./problem-details.js";

/**
 * The response check (HTTP_VALIDATE_RESPONSES, on in the tests): every answer of a route that
 * documents its responses is held to the schema it documents for that status, and a status it
 * does not document is a violation. A violation is answered `500` with a problem saying what
 * did not match, so any test of the route fails on it. An answer to a deprecated spelling
 * (`Deprecation` header) is held to the route's `config.deprecatedAnswers` for its status.
 */

type Schemas = Record<string, z.ZodType>;

/** Routes whose errors follow another specification (OTLP/HTTP), checked by their own tests. */
const unchecked = new Set(["/v1/traces"]);

function schemaFor(request: FastifyRequest, reply: FastifyReply): z.ZodType | null | undefined {
  const response = (request.routeOptions.schema as { response?: Schemas } | undefined)?.response;
  if (!response) return null;
  const status = reply.statusCode;
  if (reply.getHeader("deprecation") !== undefined) {
    const config = request.routeOptions.config as { deprecatedAnswers?: Record<number, z.ZodType> };
    const deprecated = config.deprecatedAnswers?.[status];
    if (deprecated) return deprecated;
  }
  return response[String(status)];
}

/** What is wrong with the answer, or null when it is what the route documents. */
export function contractViolation(schema: z.ZodType, body: unknown): string[] | null {
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    return parsed.error.issues.map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`);
  // Keys the schema does not document are stripped by the parse: the answer must survive it whole.
  if (!isDeepStrictEqual(parsed.data, body)) return ["the answer has keys its schema does not document"];
  return null;
}

function violated(reply: FastifyReply, request: FastifyRequest, issues: string[]): string {
  const status = reply.statusCode;
  void reply.code(500).header("content-type", problemContentType);
  const detail = `the ${String(status)} answer of ${request.method} ${request.routeOptions.url ?? ""} does not match its documented schema`;
  return JSON.stringify({
    type: `${problemTypeBase}response-contract`,
    title: "The answer does not match its documented schema",
    status: 500,
    detail,
    instance: request.url.split("?")[0] ?? "/",
    error: "response_contract",
    message: `${detail}: ${issues.join("; ")}`,
    issues,
  });
}

/** Registered after `answerProblems`, so it checks the answers as they leave. */
export function checkResponses(app: FastifyInstance): void {
  app.addHook("onSend", async (request, reply, payload) => {
    const url = request.routeOptions.url;
    if (url === undefined || unchecked.has(url)) return payload;
    const schema = schemaFor(request, reply);
    if (schema === null) return payload;
    if (schema === undefined)
      return violated(reply, request, [`status ${String(reply.statusCode)} is not documented`]);
    const type = String(reply.getHeader("content-type") ?? "application/json");
    if (!/json/i.test(type) || typeof payload !== "string") return payload;
    const issues = contractViolation(schema, JSON.parse(payload));
    return issues ? violated(reply, request, issues) : payload;
  });
}
