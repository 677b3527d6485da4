import { z } from "zod";

/** The operational endpoints' schemas: summary, operationId, tag and the answers they document. */

const Checks = z.record(z.string(), z.boolean());

export const operationalAnswers = {
  openapi: {
    summary: "The OpenAPI 3.1 document (also at /docs/openapi.json)",
    operationId: "getOpenApi",
    tags: ["operations"],
    response: { 200: z.looseObject({ openapi: z.string() }).describe("the OpenAPI 3.1 document") },
  },
  healthz: {
    summary: "Alive while the process runs",
    operationId: "getHealth",
    tags: ["operations"],
    response: { 200: z.object({ status: z.literal("ok") }).describe("alive") },
  },
  readyz: {
    summary: "Ready: consuming, and every dependency answers",
    operationId: "getReadiness",
    tags: ["operations"],
    response: {
      200: z.object({ status: z.literal("ready"), checks: Checks }).describe("ready"),
      503: z
        .object({ status: z.literal("not_ready"), checks: Checks })
        .describe("not ready: `checks` says which check failed"),
    },
  },
  metrics: {
    summary: "Prometheus metrics",
    operationId: "getMetrics",
    tags: ["operations"],
    response: { 200: z.string().describe("Prometheus text format") },
  },
};
