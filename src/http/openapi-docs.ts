import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { deprecatedSpellingsSunset } from "../features/api-context.js";
import { renderApiReference } from "./openapi-page.js";

/**
 * The OpenAPI document's frame (`@fastify/swagger` fills in the operations from the routes' zod
 * schemas) and the API reference the app serves: `/docs` (a self-contained page rendered from the
 * document) and `/docs/openapi.json` (the document; `/openapi.json` too, as before). The document
 * is committed as `docs/openapi.json` (`npm run openapi` writes it; a test fails when it is stale).
 */

export const apiDescription = [
  "Reflector's HTTP API: lessons learnt from AI agents' runs, the loop guardrails, feedback, and reflecting one run over HTTP.",
  "",
  "**One style.** Every JSON key and query parameter under `/api/v1` is snake_case; pages are `limit` (and `offset` where a route pages).",
  "",
  "**Errors** are RFC 9457 problem details (`application/problem+json`): `type`, `title`, `status`, `detail`, `instance`, with `error`, `message` and, for a 400, `issues` kept from before (docs/error-codes.md#http-problems).",
  "",
  "**Authentication:** `Authorization: Bearer <key>`; the key's tenant and roles decide what it may do (docs/api.md#authentication-and-tenants).",
].join("\n");

/** The deprecated spellings and when they go: rendered in the reference page under `#deprecations`. */
export const deprecations = {
  sunset: deprecatedSpellingsSunset,
  items: [
    "`POST /api/v1/lessons/for-task` in camelCase (`agentId`, `projectId`, `loopId`, `minImportance`, `minRelevance`): a request that uses any of them is answered in the camelCase of before (`recordedFor`, `checkedBy`, `reflectionId`, …). Send snake_case.",
    "`k` on `GET /api/v1/reflections` and `GET /api/v1/reflections/{id}/sources`: the alias of `limit`. The list's answer carries `k` beside `limit` until then.",
  ],
};

export const apiTags = [
  { name: "reflect", description: "Reflect one run over HTTP, through the same pipeline as a Kafka event" },
  { name: "lessons", description: "The stored lessons: search, lessons for a task, signatures, splits" },
  { name: "feedback", description: "Users' votes on lessons and on agents' answers" },
  { name: "strategies", description: "Each lesson's strategy, searchable as a memory of its own" },
  { name: "loops", description: "The orchestrator endpoints: decide a finished loop, its guardrails" },
  { name: "otlp", description: "OTLP/HTTP trace export (errors as google.rpc.Status, as OTLP specifies)" },
  { name: "operations", description: "Liveness, readiness, metrics and this document" },
];

/** The HTML reference and the document under `/docs`; `document` is the app's `swagger()`. */
export function registerApiReference(app: FastifyInstance, document: () => Record<string, unknown>): void {
  let page: string | null = null;
  app.get(
    "/docs",
    {
      schema: {
        summary: "The API reference, rendered from the OpenAPI document",
        operationId: "getApiReference",
        tags: ["operations"],
        response: { 200: z.string().describe("an HTML page") },
      },
    },
    async (_request, reply) => {
      page ??= renderApiReference(document(), deprecations);
      return reply.header("content-type", "text/html; charset=utf-8").send(page);
    },
  );
  app.get(
    "/docs/openapi.json",
    {
      schema: {
        summary: "The OpenAPI 3.1 document",
        operationId: "getOpenApiDocument",
        tags: ["operations"],
        response: { 200: z.looseObject({ openapi: z.string() }).describe("the OpenAPI 3.1 document") },
      },
    },
    () => document(),
  );
}

function refsIn(value: unknown, found: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) refsIn(item, found);
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === "$ref" && typeof item === "string") found.add(item.replace("#/components/schemas/", ""));
      else refsIn(item, found);
    }
  }
}

/**
 * The document without the component schemas nothing refers to: the zod registry holds every
 * named schema in an input and an output form, and a client generator would make a type of each.
 */
export function withoutUnusedSchemas<T extends object>(document: T, keep: readonly string[] = []): T {
  const doc = document as { components?: { schemas?: Record<string, unknown> } };
  const schemas = doc.components?.schemas;
  if (!schemas) return document;
  const used = new Set<string>(keep);
  refsIn({ ...doc, components: { ...doc.components, schemas: {} } }, used);
  for (let size = -1; size !== used.size;) {
    size = used.size;
    for (const name of [...used]) refsIn(schemas[name], used);
  }
  const kept = Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name)));
  return { ...doc, components: { ...doc.components, schemas: kept } } as T;
}

/** A parameter whose schema is deprecated is marked so on the parameter, where OpenAPI tools look. */
export function withDeprecatedParameters<T extends object>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, { parameters?: unknown }>> }).paths;
  for (const item of Object.values(paths ?? {})) {
    for (const operation of Object.values(item)) {
      const parameters = Array.isArray(operation.parameters) ? operation.parameters : [];
      for (const parameter of parameters as { schema?: { deprecated?: boolean }; deprecated?: boolean }[]) {
        if (parameter.schema?.deprecated === true) parameter.deprecated = true;
      }
    }
  }
  return document;
}
