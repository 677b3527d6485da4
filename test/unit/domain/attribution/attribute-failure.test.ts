import { describe, expect, it } from "vitest";
import {
  attributeFailure,
  locateByEvidence,
  locateFailure,
} from "../../../../src/domain/attribution/attribute-failure.js";
import { defaultCalibration } from "../../../../src/domain/attribution/calibration.js";
import { attributionConfidence } from "../../../../src/domain/attribution/attribution-confidence.js";
import type { TaskCompleted, TraceEvent } from "../../../../src/domain/contracts/index.js";
import { classifyFailure } from "../../../../src/domain/heuristic/classify-failure.js";
import { generateHeuristicReflection } from "../../../../src/domain/heuristic/generate-heuristic-reflection.js";
import { cueText, multiAgentTrace } from "../../../support/multi-agent-trace.js";
import { taskEvent } from "../../../support/task-events.js";

const at = "2026-11-20T10:00:00.000Z";

function step(i: number, fields: Partial<TraceEvent>): TraceEvent {
  return { eventId: `s${String(i)}`, type: "llm_response", timestamp: at, content: "", ...fields };
}

function trace(events: TraceEvent[], overrides: Partial<TaskCompleted> = {}): TaskCompleted {
  return taskEvent({
    outcome: "failure",
    error: { category: "wrong_answer", message: "the final answer was judged incorrect" },
    events,
    ...overrides,
  });
}

describe("attributeFailure", () => {
  it("on a wrong outcome, blames a tool-using agent's first write over an earlier 'assume' cue", () => {
    const event = trace([
      step(0, { actor: "user", content: "Please cancel reservation M20IZO for user raj_sanchez_7340." }),
      step(1, {
        actor: "agent",
        content: "I'll assume you mean the trip to Seattle on May 20, let me look.",
      }),
      step(2, {
        actor: "agent",
        type: "tool_call",
        toolName: "get_reservation_details",
        content: '{"reservation_id":"M20IZO"}',
      }),
      step(3, {
        actor: "agent",
        type: "tool_response",
        toolName: "get_reservation_details",
        content: '{"cabin":"economy"}',
      }),
      step(4, {
        actor: "agent",
        type: "tool_call",
        toolName: "cancel_reservation",
        content: '{"reservation_id":"M20IZO"}',
      }),
      step(5, { actor: "agent", content: "Your reservation is cancelled." }),
    ]);
    const located = locateByEvidence(event);
    expect(located.basis).toBe("first_state_change");
    expect(located.stepIndex).toBe(4);
    // Without a write, an "assume" cue is no evidence (it named the annotated step less often than
    // a rule ignoring the trace where nobody tuned it): the fallback answers, and says so.
    const noWrite = trace([...event.events.slice(0, 4), step(4, { actor: "agent", content: "Done." })]);
    expect(locateByEvidence(noWrite).basis).toBe("structural_fallback");
  });

  it("is undefined for a success", () => {
    expect(attributeFailure(taskEvent({ outcome: "success", error: undefined }))).toBeUndefined();
  });

  it("names an explicit error step with its tool and the agent that called it, with high confidence", () => {
    const event = trace([
      step(0, { actor: "Orchestrator", content: "Plan: query the orders table for customer 4411." }),
      step(1, {
        actor: "Coder",
        type: "tool_call",
        toolName: "postgres_query",
        content: "SELECT * FROM orders",
      }),
      step(2, {
        type: "error_event",
        toolName: "postgres_query",
        content: "Query timeout after 30 seconds",
        error: { message: "canceling statement due to statement timeout" },
      }),
      step(3, { actor: "Orchestrator", content: "The query did not finish; answering from memory." }),
    ]);
    expect(attributeFailure(event)).toEqual({
      eventId: "s2",
      stepIndex: 2,
      actor: "Coder",
      toolName: "postgres_query",
      confidence: attributionConfidence.explicitErrorWithTool,
      evidence: "canceling statement due to statement timeout",
    });
  });

  it("treats a tool response with an error status as explicit, and agrees with classifyFailure", () => {
    const event = trace([
      step(0, { actor: "Assistant", type: "tool_call", toolName: "http_get", content: "GET /report" }),
      step(1, {
        actor: "Assistant",
        type: "tool_response",
        toolName: "http_get",
        content: "upstream unavailable",
        metadata: { status: 503 },
      }),
      step(2, { actor: "Assistant", content: "FINAL ANSWER: 12" }),
    ]);
    const attribution = attributeFailure(event);
    expect(attribution).toMatchObject({ stepIndex: 1, toolName: "http_get", confidence: 0.9 });
    expect(classifyFailure(event).failingStep?.eventId).toBe(attribution?.eventId);
    // The default example trace of the other tests: classify-failure's failing step is the attribution's.
    const example = taskEvent();
    expect(classifyFailure(example).failingStep?.eventId).toBe(attributeFailure(example)?.eventId);
  });

  it("finds the step that holds the task error's message, across other line breaks", () => {
    const event = trace(
      [
        step(0, { actor: "Orchestrator", content: "Ask the coder to load the sales file." }),
        step(1, { actor: "Assistant", content: "import pandas as pd\ndf = pd.read_csv('sales.csv')" }),
        step(2, {
          actor: "Computer_terminal",
          content:
            "exitcode: 1 (execution output)\nFileNotFoundError: [Errno 2] No such file\nor directory: 'sales.csv'",
        }),
        step(3, { actor: "Orchestrator", content: "FINAL ANSWER: unknown" }),
      ],
      {
        error: {
          category: "tool_error",
          message: "FileNotFoundError: [Errno 2] No such file or directory: 'sales.csv'",
        },
      },
    );
    const located = locateByEvidence(event);
    expect(located.basis).toBe("message_match");
    expect(located.attribution).toMatchObject({
      eventId: "s2",
      stepIndex: 2,
      actor: "Computer_terminal",
      confidence: attributionConfidence.messageMatch,
    });
    expect(located.attribution.evidence).toContain("no such file or directory");
  });

  it("falls back to a rule that ignores the trace, at its measured confidence, when nothing points anywhere", () => {
    const event = trace([
      step(0, { actor: "Planner", content: "Plan: compute the total of the invoice lines." }),
      step(1, {
        actor: "Computer_terminal",
        type: "tool_response",
        content: "Script ran. Totals written to out.csv",
      }),
      step(2, { actor: "Assistant", content: "The total of the invoice lines is in out.csv as computed." }),
      step(3, { actor: "Assistant", content: "FINAL ANSWER: 1280.50" }),
    ]);
    const located = locateFailure(event);
    // No error event: the first error event rule names the last event; the agent is the one that
    // did most of the work.
    expect(located.basis).toBe("structural_fallback");
    expect(located.attribution).toMatchObject({
      stepIndex: 3,
      actor: "Assistant",
      confidence: defaultCalibration.fallback.reliability.exact,
    });
    expect(located.attribution.evidence).toMatch(/no evidence in the trace/);
  });

  it("finds an agent repeating itself word for word", () => {
    const same = "Clicking the next page button to load more search results for the query.";
    const repeating = trace([
      step(0, { actor: "Planner", content: "Plan: find the bridge's opening year online." }),
      step(1, { actor: "WebSurfer", content: "Opened the search engine and typed the bridge's name." }),
      step(2, { actor: "WebSurfer", content: same }),
      step(3, { actor: "Planner", content: "Please keep going through the results pages." }),
      step(4, { actor: "WebSurfer", content: same }),
      step(5, { actor: "Planner", content: "FINAL ANSWER: 1931" }),
    ]);
    const located = locateByEvidence(repeating);
    expect(located.basis).toBe("repetition");
    expect(located.attribution).toMatchObject({ stepIndex: 2, actor: "WebSurfer", confidence: 0.4 });
    expect(located.attribution.evidence).toMatch(/^repeated word for word at step 4/);
  });

  it("says so when the trace has no steps", () => {
    expect(attributeFailure(trace([]))).toEqual({ confidence: 0.05, evidence: "the trace has no steps" });
  });

  it("reads megabyte steps of adversarial text in one pass (1 MB and 2 MB both finish)", () => {
    // Near-misses of every cue and of the error message, repeated: any backtracking or
    // re-scanning per position would be quadratic here. No timing is asserted: the scan is a
    // fixed number of indexOf passes with needles of at most 80 characters.
    const nearMiss = "unable t erro probabl couldn't fin i'll gues 1111111111 aaaaaaaaaaaaaaaaaaaaaaaaaaaab ";
    for (const size of [1_000_000, 2_000_000]) {
      const content = nearMiss.repeat(Math.ceil(size / nearMiss.length)).slice(0, size);
      const event = trace(
        [
          step(0, { actor: "WebSurfer", content }),
          step(1, { actor: "Assistant", content: " ".repeat(size) }),
          step(2, { actor: "WebSurfer", content }),
          step(3, { actor: "Assistant", content: "FINAL ANSWER: 7" }),
        ],
        { error: { category: "wrong_answer", message: `${"a".repeat(200)}c` } },
      );
      const located = locateByEvidence(event);
      // No cue matches (all are cut short); the agent repeated step 0 word for word at step 2.
      expect(located.basis).toBe("repetition");
      expect(located.attribution.stepIndex).toBe(0);
      expect(located.attribution.evidence?.length).toBeLessThanOrEqual(200);
      // Repetition named a step within one of the annotated one more often than the fallback on
      // the tuned sources' runs where it fired (calibration.ts): it decides the step.
      expect(generateHeuristicReflection(event).attribution?.stepIndex).toBe(0);
    }
  });

  it("classifies an error step of adversarial text at the contract's limit without backtracking", () => {
    // A run of digits once made the number patterns retry from every digit (quadratic).
    for (const content of ["1".repeat(64_000), "exceeded ".repeat(7_000), "1 ".repeat(32_000)]) {
      const event = trace([step(0, { type: "error_event", toolName: "terminal", content })]);
      expect(classifyFailure(event).failingStep?.eventId).toBe("s0");
      expect(generateHeuristicReflection(event).attribution?.confidence).toBe(0.9);
    }
  });
});

describe("the heuristic generator's attribution", () => {
  it("sets an attribution on every failure, and none on a success", () => {
    expect(generateHeuristicReflection(taskEvent()).attribution).toMatchObject({
      eventId: "e2",
      stepIndex: 1,
      toolName: "postgres_query",
      confidence: 0.9,
    });
    expect(generateHeuristicReflection(taskEvent({ events: [] })).attribution).toBeDefined();
    expect(
      generateHeuristicReflection(taskEvent({ outcome: "success", error: undefined })).attribution,
    ).toBeUndefined();
  });

  it("claims no cause from an agent's guess in a wrong answer's trace: the cue is no evidence", () => {
    const event = multiAgentTrace({
      steps: 30,
      bigStep: 5,
      bigStepChars: 5_000,
      totalChars: 40_000,
      cueStep: 13,
    });
    expect(cueText).toContain("I'll guess");
    const reflection = generateHeuristicReflection(event);
    expect(reflection.reflectionText).not.toContain("guessed, assumed");
    expect(reflection.reflectionText).toMatch(/no cause is claimed and no lesson is written/);
    expect(reflection.learning).toBe("");
    expect(reflection.attribution?.confidence).toBeLessThan(0.5);
  });
});
