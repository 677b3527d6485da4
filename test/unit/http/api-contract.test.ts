import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import Fastify from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { openApiPath } from "../../../src/cli/write-openapi.js";
import type { LessonsForTask } from "../../../src/features/lessons/lessons-for-task.js";
import { renderOpenApiDocument } from "../../../src/http/openapi-document.js";
import { answerProblems } from "../../../src/http/problem-details.js";
import { checkResponses } from "../../../src/http/response-check.js";
import { apiTestServer } from "../../support/api-server.js";
import { problem } from "../../support/problems.js";

/**
 * The API as a contract: the committed OpenAPI document is the one the app serves, every operation
 * names itself and documents every status it can answer, errors are problem details, and the
 * deprecated spellings still work, saying so.
 */

const lesson = {
  reflectionId: "00000000-0000-4000-8000-000000000001",
  relevance: 0.9,
  effectiveQuality: 0.8,
  importance: 0.7,
  strategyText: "Check the order id before fetching",
  adjustments: ["validate ids"],
  tags: ["orders"],
  projectId: "p",
  createdAt: "2026-12-01T00:00:00.000Z",
  prompt: "Advice from past runs: check the order id",
  applied: { helped: 1, failedAgain: 0 },
};
const asked: unknown[] = [];
const forTask = {
  forTask: (_tenant: string, body: unknown) => {
    asked.push(body);
    return Promise.resolve({ floor: 0.28, checkedBy: "meaning", lessons: [lesson], recordedFor: null });
  },
} as unknown as LessonsForTask;
const app = apiTestServer(
  "contract-key-1:tenant-c:read+vote",
  { commonIssues: () => Promise.resolve([{ issue: "no citation", count: 2 }]), lessonsForTask: forTask },
  { validateResponses: true },
);
afterAll(async () => {
  await app.close();
});

const auth = { authorization: "Bearer contract-key-1" };
const forTaskPost = (payload: object) =>
  app.inject({ method: "POST", url: "/api/v1/lessons/for-task", headers: auth, payload });

interface Operation {
  operationId?: string;
  tags?: string[];
  responses: Record<string, unknown>;
}

describe("the OpenAPI document", () => {
  it("is committed as docs/openapi.json, as the app generates it (npm run openapi)", async () => {
    expect(readFileSync(openApiPath, "utf8")).toBe(await renderOpenApiDocument());
  });

  it("is a valid OpenAPI 3.1 document whose every operation has a unique camelCase operationId and a tag", async () => {
    const doc = JSON.parse(readFileSync(openApiPath, "utf8")) as {
      paths: Record<string, Record<string, Operation>>;
    };
    const result = await new Validator().validate(doc);
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((op) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z]+[A-Za-z]*$/);
    for (const ops of Object.values(doc.paths))
      for (const op of Object.values(ops)) expect(op.tags?.length, op.operationId).toBeGreaterThan(0);
  });

  it("documents, for every authenticated operation, each status it can answer, errors as problems", () => {
    const doc = JSON.parse(readFileSync(openApiPath, "utf8")) as {
      paths: Record<string, Record<string, Operation>>;
    };
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith("/api/v1/") && !path.startsWith("/orchestrator/")) continue;
      for (const [method, op] of Object.entries(ops)) {
        const statuses = Object.keys(op.responses);
        const always = [
          "400",
          "401",
          "403",
          "429",
          "500",
          "503",
          ...(method === "post" ? ["413", "415"] : []),
        ];
        expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(always));
        expect(statuses.some((s) => s.startsWith("2"))).toBe(true);
        for (const status of always) {
          const text = JSON.stringify(op.responses[status]);
          // The shared problem schema, or one extending it (its `type`, `title`, … spelled out).
          expect(text.includes("#/components/schemas/Problem") || text.includes('"instance"'), status).toBe(
            true,
          );
        }
        checked += 1;
      }
    }
    expect(checked).toBe(17);
  });

  it("is served at /docs/openapi.json, and rendered at /docs as a page that loads nothing from elsewhere", async () => {
    const served = await app.inject({ method: "GET", url: "/docs/openapi.json" });
    expect(served.statusCode).toBe(200);
    expect(served.json<{ openapi: string }>().openapi).toBe("3.1.0");
    const page = await app.inject({ method: "GET", url: "/docs" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    for (const id of ["listReflections", "getLessonsForTask", "recordFeedback", "completeLoop"])
      expect(page.body).toContain(id);
    expect(page.body).toContain('id="deprecations"');
    expect(page.body).not.toMatch(/<script|<link|src=|href="https?:/i);
  });
});

describe("problem details", () => {
  it("answers an unknown route, a wrong media type and a missing key as application/problem+json", async () => {
    const missing = await app.inject({ method: "GET", url: "/api/v1/nothing?x=1" });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers["content-type"]).toBe("application/problem+json; charset=utf-8");
    expect(missing.json()).toEqual(
      problem(404, "/api/v1/nothing", { error: "not_found", message: "no route GET /api/v1/nothing" }),
    );
    expect(missing.json()).toMatchObject({ type: "/problems/not-found", title: "Not found", status: 404 });
    const media = await app.inject({
      method: "POST",
      url: "/api/v1/lessons/for-task",
      headers: { ...auth, "content-type": "application/xml" },
      payload: "<task/>",
    });
    expect(media.statusCode).toBe(415);
    expect(media.json()).toMatchObject({
      type: "/problems/unsupported-media-type",
      error: "unsupported_media_type",
    });
    const large = await app.inject({
      method: "POST",
      url: "/api/v1/lessons/for-task",
      headers: { ...auth, "content-type": "application/json" },
      payload: JSON.stringify({ task: "x".repeat(2 * 1024 * 1024) }),
    });
    expect(large.statusCode).toBe(413);
    expect(large.json()).toMatchObject({ type: "/problems/payload-too-large", status: 413 });
    const unauthorized = await app.inject({ method: "GET", url: "/api/v1/insights" });
    expect(unauthorized.json()).toMatchObject({ type: "/problems/unauthorized", status: 401 });
  });

  it("names every offending field of a 400 in `issues`, beside the problem's keys", async () => {
    const bad = await forTaskPost({ task: "", limit: 0 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      type: "/problems/validation",
      title: "The request is invalid",
      status: 400,
      instance: "/api/v1/lessons/for-task",
      error: "bad_request",
    });
    expect(bad.json<{ issues: string[] }>().issues).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^body\.task: /),
        expect.stringMatching(/^body\.limit: /),
      ]),
    );
  });
});

describe("one spelling: lessons for a task", () => {
  it("takes snake_case and answers snake_case, without a Deprecation header", async () => {
    asked.length = 0;
    const res = await forTaskPost({
      task: "Fetch an order",
      project_id: "p",
      min_importance: 0.2,
      loop_id: "l1",
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toBeUndefined();
    expect(asked[0]).toMatchObject({ projectId: "p", minImportance: 0.2, loopId: "l1", limit: 5 });
    expect(res.json()).toEqual({
      floor: 0.28,
      checked_by: "meaning",
      recorded_for: null,
      lessons: [
        {
          reflection_id: lesson.reflectionId,
          relevance: 0.9,
          effective_quality: 0.8,
          importance: 0.7,
          strategy_text: lesson.strategyText,
          adjustments: lesson.adjustments,
          tags: lesson.tags,
          project_id: "p",
          created_at: lesson.createdAt,
          prompt: lesson.prompt,
          applied: { helped: 1, failed_again: 0 },
        },
      ],
    });
  });

  it("still takes the deprecated camelCase, answering in camelCase with Deprecation, Sunset and Link", async () => {
    asked.length = 0;
    const res = await forTaskPost({ task: "Fetch an order", projectId: "p", minImportance: 0.2 });
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toBe("true");
    expect(res.headers.sunset).toBe("Sat, 05 Jun 2027 00:00:00 GMT");
    expect(res.headers.link).toBe('</docs#deprecations>; rel="deprecation"; type="text/html"');
    expect(asked[0]).toMatchObject({ projectId: "p", minImportance: 0.2 });
    expect(res.json()).toEqual({ floor: 0.28, checkedBy: "meaning", recordedFor: null, lessons: [lesson] });
  });

  it("refuses one field given in both spellings", async () => {
    const res = await forTaskPost({ task: "Fetch an order", project_id: "p", projectId: "p" });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ issues: string[] }>().issues).toEqual([
      "body.projectId: projectId is the deprecated spelling of project_id: send project_id alone",
    ]);
  });
});

describe("the response check", () => {
  const checked = Fastify();
  answerProblems(checked);
  checkResponses(checked);
  checked.setSerializerCompiler(() => (data) => JSON.stringify(data));
  const Answer = z.object({ a: z.string() });
  const schema = { response: { 200: Answer, 400: z.looseObject({ error: z.string() }) } };
  checked.get("/right", { schema }, () => ({ a: "x" }));
  checked.get("/wrong-type", { schema }, () => ({ a: 1 }));
  checked.get("/extra-key", { schema }, () => ({ a: "x", b: 2 }));
  // A status the route does not document (typed as one it does, to get past the compiler).
  checked.get("/undocumented", { schema }, async (_request, reply) =>
    reply.code(409 as 400).send({ error: "conflict" }),
  );
  checked.get(
    "/deprecated",
    { schema, config: { deprecatedAnswers: { 200: z.object({ A: z.string() }) } } },
    async (_request, reply) => reply.header("deprecation", "true").send({ A: "x" }),
  );
  afterAll(async () => {
    await checked.close();
  });

  it("passes an answer that is what its route documents", async () => {
    expect((await checked.inject({ method: "GET", url: "/right" })).statusCode).toBe(200);
    expect((await checked.inject({ method: "GET", url: "/deprecated" })).statusCode).toBe(200);
  });

  it.each([
    ["/wrong-type", "a: Invalid input: expected string, received number"],
    ["/extra-key", "the answer has keys its schema does not document"],
    ["/undocumented", "status 409 is not documented"],
  ])("answers %s with a 500 problem saying what does not match", async (url, issue) => {
    const res = await checked.inject({ method: "GET", url });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ type: "/problems/response-contract", issues: [issue] });
  });
});
