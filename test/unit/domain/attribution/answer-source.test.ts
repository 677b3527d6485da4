import { describe, expect, it } from "vitest";
import { answerValue, numbersIn, statesAnswer } from "../../../../src/domain/attribution/answer-source.js";
import { locateByEvidence } from "../../../../src/domain/attribution/attribute-failure.js";
import { attributionConfidence } from "../../../../src/domain/attribution/attribution-confidence.js";
import type { TaskCompleted, TraceEvent } from "../../../../src/domain/contracts/index.js";
import { taskEvent } from "../../../support/task-events.js";

const at = "2026-11-20T10:00:00.000Z";
const fence = "```";

function step(i: number, fields: Partial<TraceEvent>): TraceEvent {
  return { eventId: `s${String(i)}`, type: "llm_response", timestamp: at, content: "", ...fields };
}

/** A wrong answer: the platform says only that the answer was judged incorrect. */
function wrongAnswer(question: string, answer: string, events: TraceEvent[]): TaskCompleted {
  return taskEvent({
    outcome: "failure",
    task: { description: question, answer },
    error: { category: "evaluation_error", message: "the final answer was judged incorrect" },
    events: events.map((e, i) => ({ ...e, eventId: `s${String(i)}` })),
  });
}

const blocked = (i: number, toolName = "web_browser") =>
  step(i, {
    actor: "WebSurfer",
    type: "tool_response",
    toolName,
    content: "Access Denied",
    error: { message: "403 Forbidden", code: "HTTP_403" },
  });

describe("numbersIn", () => {
  it("reads figures as values and dates, times and ISO timestamps as written", () => {
    expect(numbersIn("1,349.00 and 1349 and 734.0 and €476 and £902.14")).toEqual([
      "1349",
      "1349",
      "734",
      "476",
      "902.14",
    ]);
    expect(numbersIn("on 2022-12-24 at 09:00, 07/09/2020, 2024-04-01T08:00:00Z")).toEqual([
      "2022-12-24",
      "09:00",
      "07/09/2020",
      "2024-04-01T08:00:00",
    ]);
  });

  it("skips numbers glued to letters (versions, names) and trailing punctuation", () => {
    expect(numbersIn("v2.9.1 x86 abc123 COVID19 42. (7)")).toEqual(["42", "7"]);
  });

  it("is one pass over a megabyte of digits and separators", () => {
    const text = "1,".repeat(500_000);
    expect(numbersIn(text)).toHaveLength(1);
    expect(numbersIn("9 ".repeat(500_000), 3)).toEqual(["9", "9", "9"]);
  });
});

describe("answerValue and statesAnswer", () => {
  it("leaves out numbers the question gives", () => {
    const event = wrongAnswer("How many albums between 2000 and 2009?", "7 albums (2000–2009)", []);
    expect(answerValue(event)).toEqual({ numbers: ["7"], phrase: null });
    expect(statesAnswer(step(0, { content: "I count 7 of them." }), { numbers: ["7"], phrase: null })).toBe(
      true,
    );
    expect(statesAnswer(step(0, { content: "I count 17 of them." }), { numbers: ["7"], phrase: null })).toBe(
      false,
    );
  });

  it("uses the answer's text when it holds no number, unless the question holds it too", () => {
    const names = wrongAnswer("Which museum opens on Mondays?", "Museo  Sorolla", []);
    expect(answerValue(names)).toEqual({ numbers: [], phrase: "museo sorolla" });
    const subset = wrongAnswer("Which of Albertina, Belvedere, Leopold?", "Albertina, Belvedere", []);
    expect(answerValue(subset)).toBeNull();
  });
});

describe("attribution of a wrong answer to its source", () => {
  it("blames the agent that read the value from a page, not the blocked page the team went past", () => {
    const event = wrongAnswer("What was the 2020 census population of Fresno?", "552,186", [
      step(0, { actor: "Orchestrator", content: "Plan: open the Wikipedia list and read the Fresno row." }),
      // Never recovered from (no later success of this tool), and still not why the answer is wrong.
      blocked(1, "pdf_reader"),
      step(2, { actor: "WebSurfer", type: "tool_call", toolName: "web_browser", content: 'click("List")' }),
      step(3, {
        actor: "WebSurfer",
        type: "tool_response",
        toolName: "web_browser",
        content: "| 34 | Fresno | 542,107 |\n| 35 | Sacramento | 552,186 |",
      }),
      step(4, {
        actor: "WebSurfer",
        content: "The row reads | 35 | Sacramento | 552,186 |, so it is 552,186.",
      }),
      step(5, { actor: "Orchestrator", content: "WebSurfer reported 552,186; that answers the request." }),
      step(6, { actor: "Orchestrator", content: "FINAL ANSWER: 552,186" }),
    ]);
    expect(locateByEvidence(event)).toMatchObject({
      basis: "answer_source",
      stepIndex: 4,
      attribution: { actor: "WebSurfer", confidence: attributionConfidence.answerSource },
    });
  });

  it("blames the code whose run printed the answer, pairing each run with its own code", () => {
    const event = wrongAnswer("Median July delay in minutes for KLM?", "734", [
      step(0, {
        actor: "Coder",
        content: `Here is the script.\n${fence}python\nprint(df.arr_delay_s.median())\n${fence}`,
      }),
      // A detour between the script and its output: another command and its own output.
      step(1, { actor: "Coder", content: `Install first.\n${fence}sh\npip install pandas\n${fence}` }),
      step(2, {
        actor: "Computer_terminal",
        type: "tool_response",
        toolName: "code_executor",
        content: "ok",
      }),
      step(3, {
        actor: "Computer_terminal",
        type: "tool_response",
        toolName: "code_executor",
        content: "exitcode: 0\nCode output: 734.0",
      }),
      step(4, { actor: "Assistant", content: "The median delay is 734 minutes." }),
      step(5, { actor: "Assistant", content: "The final answer is: 734" }),
    ]);
    expect(locateByEvidence(event)).toMatchObject({
      basis: "computed_by",
      stepIndex: 0,
      attribution: { actor: "Coder" },
    });
  });

  it("blames the agent that stated a failed run's partial output as the result", () => {
    const event = wrongAnswer("How often does 'whale' occur?", "75", [
      step(0, { actor: "Coder", content: `${fence}python\ncount()\n${fence}` }),
      step(1, {
        actor: "Computer_terminal",
        type: "tool_response",
        toolName: "code_executor",
        content: "running total 75\nTraceback (most recent call last):\nUnicodeDecodeError",
        error: { message: "UnicodeDecodeError", code: "exitcode_1" },
      }),
      step(2, {
        actor: "Assistant",
        content: "The last running total printed is 75, so it occurs 75 times.",
      }),
      step(3, { actor: "Verifier", content: "Consistent with the task. No further checks needed." }),
      step(4, { actor: "Assistant", content: "The final answer is: 75" }),
    ]);
    expect(locateByEvidence(event)).toMatchObject({
      basis: "ignored_error",
      stepIndex: 2,
      attribution: { actor: "Assistant", confidence: attributionConfidence.ignoredError },
    });
  });

  it("blames a check declared unnecessary after the value was found, and a guess made after an error", () => {
    const skipped = wrongAnswer("Median July delay in minutes for SAS?", "10.2", [
      step(0, {
        actor: "Coder",
        content: `This may miss codeshare rows; verify.\n${fence}python\nrun()\n${fence}`,
      }),
      step(1, {
        actor: "Computer_terminal",
        type: "tool_response",
        toolName: "code_executor",
        content: "10.2 91",
      }),
      step(2, {
        actor: "Verifier",
        content: "The computation looks correct. No need to recompute. Verified: 10.2.",
      }),
      step(3, { actor: "Assistant", content: "The final answer is: 10.2" }),
    ]);
    expect(locateByEvidence(skipped)).toMatchObject({
      basis: "shortcut",
      stepIndex: 2,
      attribution: { actor: "Verifier" },
    });

    const guessed = wrongAnswer("How many captures are status 200?", "22", [
      step(0, { actor: "WebSurfer", type: "tool_call", toolName: "web_browser", content: 'click("CDX")' }),
      { ...blocked(1), content: "The list could not be loaded. (error 503)" },
      step(2, {
        actor: "Orchestrator",
        content:
          "The list did not load. Based on what is typical, I will assume there are about 22 and finalize.",
      }),
      step(3, { actor: "Orchestrator", content: "FINAL ANSWER: 22" }),
    ]);
    expect(locateByEvidence(guessed)).toMatchObject({
      basis: "shortcut",
      stepIndex: 2,
      attribution: { actor: "Orchestrator", confidence: attributionConfidence.shortcut },
    });
  });

  it("ignores a shortcut taken before the answer's source: it did not produce the answer", () => {
    const event = wrongAnswer("How many papers in the list match?", "12", [
      step(0, { actor: "Coder", content: "I'll assume the file is UTF-8; no need to check the encoding." }),
      step(1, { actor: "WebSurfer", type: "tool_response", toolName: "web_browser", content: "| a | 12 |" }),
      step(2, { actor: "WebSurfer", content: "The table says 12 papers match." }),
      step(3, { actor: "Orchestrator", content: "FINAL ANSWER: 12" }),
    ]);
    expect(locateByEvidence(event)).toMatchObject({ basis: "answer_source", stepIndex: 2 });
  });

  it("blames whoever took one page's count for the whole list", () => {
    const event = wrongAnswer("How many papers in the list match?", "4", [
      step(0, {
        actor: "WebSurfer",
        type: "tool_response",
        toolName: "web_browser",
        content: "Page 1 of 3 · Next ›",
      }),
      step(1, { actor: "WebSurfer", content: "On this page I count 4 papers that match." }),
      step(2, { actor: "Orchestrator", content: "WebSurfer has counted the papers: 4. Request satisfied." }),
      step(3, { actor: "Orchestrator", content: "FINAL ANSWER: 4" }),
    ]);
    expect(locateByEvidence(event)).toMatchObject({
      basis: "shortcut",
      stepIndex: 2,
      attribution: { actor: "Orchestrator" },
    });
  });

  it("keeps a reported error's own step first when the task's error says what failed", () => {
    const event = taskEvent({
      outcome: "failure",
      task: { description: "Sum the invoices", answer: "1280.50" },
      error: { category: "tool_error", message: "canceling statement due to statement timeout" },
      events: [
        step(0, { actor: "Assistant", content: "Earlier total from the cache: 1280.50" }),
        step(1, {
          type: "error_event",
          toolName: "postgres_query",
          content: "timeout",
          error: { message: "canceling statement due to statement timeout" },
        }),
        step(2, { actor: "Assistant", content: "FINAL ANSWER: 1280.50" }),
      ],
    });
    expect(locateByEvidence(event)).toMatchObject({ basis: "explicit_error", stepIndex: 1 });
  });

  it("does not take the plan that restates the question for the answer's source", () => {
    const question =
      "How many studio albums did the artist publish in the years listed on the second page of the list?";
    const event = wrongAnswer(question, "3", [
      step(0, {
        actor: "Orchestrator",
        content: `We are working on: ${question}\nPlan: 1. search 2. count 3. answer`,
      }),
      step(1, { actor: "WebSurfer", content: "The discography lists 3 studio albums in that range." }),
      step(2, { actor: "Orchestrator", content: "FINAL ANSWER: 3" }),
    ]);
    expect(locateByEvidence(event)).toMatchObject({ basis: "answer_source", stepIndex: 1 });
  });
});
