import { describe, expect, it } from "vitest";
import type { Reflection } from "../../../../src/domain/contracts/index.js";
import { assessGroundedDepth } from "../../../../src/domain/quality/grounded-depth.js";
import { defaultQualityConfig as config } from "../../../../src/domain/quality/quality-config.js";
import { scoreActionability } from "../../../../src/domain/quality/score-actionability.js";
import { traceFacts } from "../../../../src/domain/quality/trace-facts.js";
import {
  decideVerdict,
  storageProblem,
  validateReflection,
} from "../../../../src/domain/quality/validate-reflection.js";
import { researchRun } from "../../../support/research-run.js";
import { taskEvent } from "../../../support/task-events.js";

const run = researchRun;
const facts = traceFacts(run);
const depth = (text: string, attribution?: Reflection["attribution"]) =>
  assessGroundedDepth(text, facts, config.depth, attribution);

const rootCause =
  "At step 2 WebSurfer downloaded 'NY.GDS.TOTL.ZS' (gross domestic savings) although the question asks for " +
  "gross savings, and the Orchestrator accepted the file at step 3 without checking the indicator code, " +
  "so the final answer 24.6 came from the wrong series.";

describe("grounded depth", () => {
  it("earns the deepest level by naming the run's step, agent, value, mechanism and decision", () => {
    const d = depth(rootCause);
    expect(d.level).toBe("deep");
    expect(d.grounded).toEqual(expect.arrayContaining(["websurfer", "orchestrator", "step 2", "24.6"]));
    expect(d.ungrounded).toEqual([]);
    expect(d.score).toBeCloseTo(0.9 + rootCause.length / 5000, 6);
  });

  it("gives indicator words alone the symptom level", () => {
    const stuffed =
      "Due to a fundamental flaw in the strategy, an incorrect assumption in the reasoning approach caused a " +
      "systematic error, because the methodology was contradictory.";
    expect(depth(stuffed).level).toBe("surface");
    expect(depth(stuffed).score).toBeLessThan(0.5);
  });

  it("counts cue words only next to the run's specifics", () => {
    const apart =
      "WebSurfer downloaded NY.GDS.TOTL.ZS at step 2. The weather was fine that day. " +
      "It failed because of a wrong assumption and a bad decision.";
    const d = depth(apart);
    expect(d.mechanism).toBe(false);
    expect(d.level).toBe("shallow");
  });

  it("does not count what the task statement already says", () => {
    const restated =
      'The team answered "What was the gross savings rate of Belgium in 2015, in percent?" wrong, so the task failed.';
    expect(depth(restated).grounded).toEqual([]);
    expect(depth(restated).level).toBe("surface");
  });

  it("treats an analysis of another run as a symptom", () => {
    const other =
      "At step 14 the agent called book_reservation with 'HAT136' and 'credit_card_4421486' because it " +
      "assumed the user wanted 3 bags; the 'total price is 305, but paid 255' error at step 17 was ignored.";
    const d = depth(other);
    expect(d.ungrounded.length).toBeGreaterThanOrEqual(3);
    expect(d.level).toBe("surface");
  });

  it("does not take a step for grounded when the sentence says it was another agent's", () => {
    const d = depth(
      "At step 4 WebSurfer chose the wrong file NY.GDS.TOTL.ZS because it assumed it was right.",
    );
    expect(d.ungrounded).toContain("step 4");
  });

  it("treats blaming the user's message as a symptom, however well quoted", () => {
    const d = depth(rootCause, { stepIndex: 4, actor: "user", confidence: 0.8 });
    expect(d.blamesOutsideTeam).toBe(4);
    expect(d.level).toBe("surface");
  });
});

describe("a judge that asks for a cause", () => {
  it("does not take a text that quotes the run but says the cause is not visible for a root cause", () => {
    const noCause =
      "At step 2 WebSurfer downloaded 'NY.GDS.TOTL.ZS' and the Orchestrator answered 24.6 at step 3, so the " +
      "task failed. The approach assumed the download would succeed; that incorrect assumption is the strategy " +
      "flaw. The trace holds no error event that explains it.";
    const d = depth(noCause);
    expect(d.admitsNoCause).toBe(true);
    expect(d.level).toBe("surface");
    expect(d.grounded).toEqual(expect.arrayContaining(["websurfer", "24.6"]));
  });

  it("does not count an assumption that is not named, however grounded the sentence", () => {
    const unnamed =
      "At step 2 WebSurfer downloaded 'NY.GDS.TOTL.ZS', so the Orchestrator's answer 24.6 at step 3 was wrong. " +
      "At step 3 the Orchestrator assumed the step would succeed; that incorrect assumption is the strategy flaw.";
    const d = depth(unnamed);
    expect(d.assumption).toBe(false);
    expect(d.level).toBe("medium");
    // Named, the same decision counts.
    expect(depth(rootCause).assumption).toBe(true);
  });

  it("grounds a quote whose hyphens or apostrophes are another code point than the trace's", () => {
    const hyphened = taskEvent({
      outcome: "failure",
      events: [
        {
          eventId: "s0",
          type: "llm_response",
          timestamp: "2026-11-20T10:00:00.000Z",
          actor: "Analyst",
          content: "A back-of-the-envelope estimate gives 4,200 units; the agent's figure stands.",
        },
      ],
    });
    const quoted = assessGroundedDepth(
      'At step 0 the Analyst used "a back\u2011of\u2011the\u2011envelope estimate gives 4,200 units; the agent\u2019s figure"',
      traceFacts(hyphened),
      config.depth,
    );
    expect(quoted.ungrounded).toEqual([]);
    expect(quoted.grounded.some((g) => g.startsWith('"a back'))).toBe(true);
  });
});

describe("grounded actionability", () => {
  const act = (adjustments: string[]) => scoreActionability(adjustments, config.actionability, facts);

  it("counts an executable form as executable only when it names something concrete", () => {
    expect(act(["add constraint: the indicator code must be NY.GNS.ICTR.ZS before download"])).toBe(1);
    expect(act(["set max_unverified_files = 0"])).toBe(1);
    expect(act(["add constraint: double-check the result before answering"])).toBe(0.4);
    expect(act(["change strategy to a more robust approach"])).toBe(0.4);
    // The literal reading counts the form alone.
    expect(scoreActionability(["change strategy to a more robust approach"], config.actionability)).toBe(1);
  });
});

describe("patterns are hypotheses; storage and retries", () => {
  const reflection: Reflection = {
    reflectionText: rootCause,
    strategyText: null,
    importance: 0.7,
    confidence: 0.8,
    tags: [],
    errorCategory: null,
    patterns: [],
    adjustments: ["add constraint: the indicator code must be NY.GNS.ICTR.ZS before download"],
    learning: "Check a downloaded series' indicator code against the question before using its values.",
  };
  const evidence = { patternEvidence: new Map(), relevance: 1, novelty: 1, trace: facts };

  it("accepts a complete lesson without patterns", () => {
    const result = validateReflection(reflection, evidence, config);
    expect(result.violations).toEqual([]);
    expect(decideVerdict(result, config)).toBe("accepted");
  });

  it("notes an unproven pattern without blocking storage or asking again", () => {
    const result = validateReflection(
      { ...reflection, patterns: ["wrong World Bank series"] },
      evidence,
      config,
    );
    expect(result.violations).toEqual([
      "Unproven pattern 'wrong World Bank series': confidence=0.00 < 0.75 (0 matching episodes, 3 needed); a hypothesis until the tenant's episodes confirm it",
    ]);
    expect(result.retryable).toBe(false);
    const verdict = decideVerdict(result, config);
    expect(verdict).toBe("accepted_with_warnings");
    expect(storageProblem(verdict, result, config)).toBeNull();
    const proven = validateReflection(
      { ...reflection, patterns: ["wrong World Bank series"] },
      { ...evidence, patternEvidence: new Map([["wrong World Bank series", { occurrences: 3, total: 3 }]]) },
      config,
    );
    expect(decideVerdict(proven, config)).toBe("accepted");
  });

  it("does not store a symptom, and does not ask again for a lesson it stores", () => {
    const symptom = validateReflection(
      { ...reflection, reflectionText: "The task failed: the final answer was judged wrong by the grader." },
      evidence,
      config,
    );
    expect(storageProblem(decideVerdict(symptom, config), symptom, config)).toMatch(
      /a symptom, not a lesson/,
    );
    expect(symptom.retryable).toBe(true);
    const weaker = validateReflection(
      { ...reflection, adjustments: [...reflection.adjustments, "be more careful"] },
      evidence,
      config,
    );
    expect(weaker.violations.some((v) => v.startsWith("Not actionable"))).toBe(true);
    expect(storageProblem(decideVerdict(weaker, config), weaker, config)).toBeNull();
    expect(weaker.retryable).toBe(false);
  });
});
