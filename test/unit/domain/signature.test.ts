import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  computeErrorSignature,
  maskVolatileTokens,
  signatureCandidates,
  signatureFor,
  signatureInputFor,
} from "../../../src/domain/signature.js";
import { taskEvent } from "../../support/task-events.js";

describe("error signature", () => {
  it("is the first 16 hex chars of sha256('type:lower-cased trimmed content')", () => {
    const expected = createHash("sha256")
      .update("conflict:detected conflict: dates differ")
      .digest("hex")
      .slice(0, 16);
    expect(computeErrorSignature("conflict", "  Detected conflict: Dates differ ")).toBe(expected);
    expect(computeErrorSignature("conflict", "x")).not.toBe(computeErrorSignature("factual_error", "x"));
  });

  it("masks ids, numbers and timestamps so two occurrences of one failure match", () => {
    expect(
      maskVolatileTokens(
        "order 4411 failed at 2026-11-20T10:00:03Z (req 3f2a9c1d-1b2c-4d5e-8f90-a1b2c3d4e5f6)",
      ),
    ).toBe("order <n> failed at <time> (req <uuid>)");
    expect(maskVolatileTokens("trace deadbeef42 took 1.5s")).toBe("trace <hex> took <n>s");
  });

  it("uses the error, then the evaluator's finding, then the last error event, then the task", () => {
    const withError = taskEvent();
    expect(signatureInputFor(withError)).toEqual({
      errorType: "query_timeout",
      content: "QUERY_TIMEOUT Query execution exceeded <n>s limit",
      source: "error",
    });

    const { error: _dropped, ...noError } = withError;
    expect(signatureInputFor(noError)).toEqual({
      errorType: "QUERY_TIMEOUT",
      content: "postgres_query canceling statement due to statement timeout",
      source: "trace",
    });

    const unverified = {
      ...noError,
      verificationResults: [{ status: "unverified" as const, claimText: "Revenue grew 40% in Q3" }],
    };
    expect(signatureInputFor(unverified)).toEqual({
      errorType: "unverified_claim",
      content: "Made unverified claim about: Revenue grew <n>% in Q3",
      source: "evaluation",
    });

    const success = taskEvent({ outcome: "success", error: undefined, events: [] });
    expect(signatureInputFor(success)).toEqual({
      errorType: "success",
      content: "Fetch customer order history",
      source: "task",
    });
  });

  it("gives the same signature to the same failure with other numbers", () => {
    const error = {
      category: "timeout_error",
      type: "query_timeout",
      message: "Query execution exceeded 30s limit",
    };
    const a = taskEvent({ error });
    const b = taskEvent({ error: { ...error, message: "Query execution exceeded 45s limit" } });
    expect(signatureFor(a)).toBe(signatureFor(b));
    expect(signatureFor(a)).not.toBe(signatureFor(taskEvent({ error: { ...error, type: "lock_timeout" } })));
  });
});

describe("signature candidates", () => {
  const generic = (description: string, actor: string, content: string) =>
    taskEvent({
      task: { description },
      outcome: "failure",
      error: { category: "evaluation_error", message: "the final answer was judged incorrect" },
      events: [
        {
          eventId: "s1",
          type: "llm_response",
          timestamp: "2026-11-20T10:00:00.000Z",
          actor,
          content,
        },
      ],
    });

  it("skips a message that says only that the task failed", () => {
    const a = generic(
      "How many studio albums did Mercedes Sosa publish?",
      "WebSurfer",
      "I could not find it",
    );
    const b = generic("What is the boiling point of ethanol in Kelvin?", "Coder", "print(78 + 273)");
    const [firstA] = signatureCandidates(a, a.events[0]);
    const [firstB] = signatureCandidates(b, b.events[0]);
    expect(firstA?.level).toBe("step");
    expect(firstA?.content).toMatch(/WebSurfer: I could not find it/);
    expect(firstA?.signature).not.toBe(firstB?.signature);
    expect(signatureFor(a)).not.toBe(signatureFor(b));
  });

  it("goes from the message to the failing step to the task, one formula for all", () => {
    const event = taskEvent();
    const step = event.events[1];
    const candidates = signatureCandidates(event, step);
    expect(candidates.map((c) => c.level)).toEqual(["message", "step", "task"]);
    expect(candidates[0]?.signature).toBe(signatureFor(event));
    for (const c of candidates) expect(c.signature).toBe(computeErrorSignature(c.errorType, c.content));
    expect(candidates[1]?.content).toContain("postgres_query");
    expect(candidates[2]?.content).toContain("Fetch customer order history");
  });
});
