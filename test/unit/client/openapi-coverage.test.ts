import { existsSync, readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { apiTestServer, type AnyApiStore } from "../../support/api-server.js";
import type {
  CamelCase,
  Feedback,
  Lesson,
  LessonsForTaskAnswer,
  LessonsForTaskQuery,
  LoopComplete,
  ReflectionsQuery,
} from "../../../src/client/index.js";
import {
  feedbackRequestFields,
  lessonFields,
  lessonsForTaskAnswerFields,
  lessonsForTaskRequestFields,
  loopCompleteRequestFields,
  reflectionsQueryFields,
} from "../../../src/client/wire.js";
import { clientCoverageProblems, type OpenApiDocument } from "../../support/openapi-coverage.js";

/**
 * The TypeScript client against the API's contract: the OpenAPI document the server generates
 * from its routes' zod shapes, and the committed docs/openapi.json once there is one. Every
 * operation the client calls must be there with the fields the client sends and reads; and the
 * client's camelCase types must be its snake_case wire lists, field for field (checked by tsc).
 */

// Type-level: each request and answer type has exactly the wire list's fields, in camelCase.
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the usual exact type equality
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Fields<L extends readonly string[]> = CamelCase<L[number]>;
const sameFields: [
  Equal<keyof LessonsForTaskQuery, Fields<typeof lessonsForTaskRequestFields>>,
  Equal<keyof LessonsForTaskAnswer, Fields<typeof lessonsForTaskAnswerFields>>,
  Equal<keyof Lesson, Fields<typeof lessonFields>>,
  Equal<keyof Feedback, Fields<typeof feedbackRequestFields>>,
  Equal<keyof LoopComplete, Fields<typeof loopCompleteRequestFields>>,
  Equal<keyof ReflectionsQuery, Fields<typeof reflectionsQueryFields>>,
] = [true, true, true, true, true, true];

const store = new Proxy({}, { get: () => () => Promise.resolve(null) }) as AnyApiStore;
const app = apiTestServer("coverage-key-1:tenant-c:read", {
  stores: { loops: store, lessons: store, feedback: store },
});
afterAll(async () => {
  await app.close();
});

const committed = new URL("../../../docs/openapi.json", import.meta.url);

describe("the TypeScript client against the OpenAPI document", () => {
  it("has types that are its wire fields in camelCase", () => {
    expect(sameFields.every(Boolean)).toBe(true);
  });

  it("covers every operation it calls, with the fields the document gives them (served and committed)", async () => {
    const served = (await app.inject({ method: "GET", url: "/openapi.json" })).json<OpenApiDocument>();
    // Reflecting over HTTP may not be on this server yet; every other operation must be.
    const reflecting = "/api/v1/reflect" in served.paths;
    const mayBeMissing = reflecting ? [] : ["reflect", "reflectOutcome"];
    expect(clientCoverageProblems(served, { mayBeMissing }).problems).toEqual([]);
    if (existsSync(committed)) {
      const doc = JSON.parse(readFileSync(committed, "utf8")) as OpenApiDocument;
      const { problems, answersChecked } = clientCoverageProblems(doc);
      expect(problems).toEqual([]);
      expect(answersChecked).toBeGreaterThan(0);
    }
  });

  it("finds a field the document renamed, one the client lacks, and a route that is gone", async () => {
    const doc = (await app.inject({ method: "GET", url: "/openapi.json" })).json<OpenApiDocument>();
    const feedback = doc.paths["/api/v1/feedback"]?.post?.requestBody?.content?.["application/json"]?.schema;
    const props = feedback?.properties as Record<string, unknown>;
    props.vote = props.rating;
    delete props.rating;
    delete doc.paths["/api/v1/insights"];
    expect(clientCoverageProblems(doc, { mayBeMissing: ["reflect", "reflectOutcome"] }).problems).toEqual([
      "feedback (POST /api/v1/feedback) body: the document's vote is not in the client",
      "feedback (POST /api/v1/feedback) body: the client's rating is not in the document",
      "insights (GET /api/v1/insights): not in the document",
    ]);
  });
});
