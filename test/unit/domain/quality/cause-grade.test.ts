import { describe, expect, it } from "vitest";
import type { Reflection, TaskCompleted } from "../../../../src/domain/contracts/index.js";
import {
  depthFromGrade,
  gradeShortfall,
  type CauseGrade,
} from "../../../../src/domain/quality/cause-grade.js";
import { defaultQualityConfig as config } from "../../../../src/domain/quality/quality-config.js";
import { traceFacts } from "../../../../src/domain/quality/trace-facts.js";
import {
  storageProblem,
  decideVerdict,
  validateReflection,
} from "../../../../src/domain/quality/validate-reflection.js";
import { researchRun } from "../../../support/research-run.js";

const levels = config.depth.levels;
const grade = (over: Partial<CauseGrade>): CauseGrade => ({
  statesCause: true,
  grounded: true,
  score: 0.9,
  reason: "names the wrong indicator at step 2",
  ...over,
});

// The same run without its last step, a user's message.
const run: TaskCompleted = { ...researchRun, events: researchRun.events.slice(0, 4) };

const analysis: Reflection = {
  reflectionText:
    "At step 2 WebSurfer downloaded 'NY.GDS.TOTL.ZS' (gross domestic savings) although the question asks for " +
    "gross savings, and the Orchestrator accepted the file at step 3 without checking the indicator code, " +
    "so the final answer 24.6 came from the wrong series.",
  strategyText: "Check that a downloaded series' indicator code matches the quantity the question names.",
  adjustments: [
    "Before answering, compare the indicator code of the downloaded file (NY.GDS.TOTL.ZS) with the one for gross savings (NY.GNS.ICTR.ZS).",
  ],
  learning:
    "Gross domestic savings and gross savings are different World Bank series; an answer must come from the series the question names.",
  importance: 0.7,
  confidence: 0.8,
  tags: ["research"],
  errorCategory: "task_failure",
  patterns: [],
  attribution: { stepIndex: 2, actor: "WebSurfer", confidence: 0.8 },
};

const judge = (causeGrade: CauseGrade | null) =>
  validateReflection(
    analysis,
    { patternEvidence: new Map(), relevance: 1, novelty: 1, trace: traceFacts(run), causeGrade },
    config,
  );
const stored = (v: ReturnType<typeof judge>) => storageProblem(decideVerdict(v, config), v, config) === null;

describe("depth from the model judge's grade", () => {
  it("puts an analysis that states no cause at the symptom level", () => {
    expect(depthFromGrade(grade({ statesCause: false, score: 0.9 }), config.depth)).toBe(levels.surface);
  });

  it("puts a cause the trace does not bear out below the 'what happened' level", () => {
    const d = depthFromGrade(grade({ grounded: false }), config.depth);
    expect(d).toBeGreaterThan(levels.surface);
    expect(d).toBeLessThan(levels.shallow);
  });

  it("puts a grounded cause between the 'why' and the deepest level, higher as the model rates it", () => {
    expect(depthFromGrade(grade({ score: 0.2 }), config.depth)).toBe(levels.medium);
    expect(depthFromGrade(grade({ score: 0.75 }), config.depth)).toBeCloseTo(
      levels.medium + (levels.deep - levels.medium) * 0.5,
      6,
    );
    expect(depthFromGrade(grade({ score: 1 }), config.depth)).toBe(levels.deep);
  });

  it("says in the violation what the model read, with its reason", () => {
    expect(gradeShortfall(grade({ statesCause: false, reason: "it only restates the outcome" }))).toBe(
      "The model judge read that the analysis states no cause of this failure: it only restates the outcome",
    );
  });
});

describe("the judge with a model's grade", () => {
  it("stores a grounded causal analysis the model grades as a cause", () => {
    const v = judge(grade({}));
    expect(v.metrics.depthScore).toBeGreaterThanOrEqual(levels.medium);
    expect(stored(v)).toBe(true);
  });

  it("never stores an analysis the model reads as stating no cause, however well it is grounded", () => {
    expect(stored(judge(null))).toBe(true);
    const v = judge(grade({ statesCause: false, score: 0.1, reason: "restates the outcome" }));
    expect(v.metrics.depthScore).toBe(levels.surface);
    expect(stored(v)).toBe(false);
    expect(v.violations.join(" ")).toContain("The model judge read that the analysis states no cause");
    expect(v.retryable).toBe(true);
  });

  it("keeps the offline reading as a floor: a grade cannot lift an analysis the trace does not ground", () => {
    const vague = { ...analysis, reflectionText: "The agent made a mistake and the answer was wrong." };
    const offline = validateReflection(
      vague,
      { patternEvidence: new Map(), relevance: 1, novelty: 1, trace: traceFacts(run) },
      config,
    );
    const graded = validateReflection(
      vague,
      {
        patternEvidence: new Map(),
        relevance: 1,
        novelty: 1,
        trace: traceFacts(run),
        causeGrade: grade({ score: 1 }),
      },
      config,
    );
    expect(graded.metrics.depthScore).toBe(offline.metrics.depthScore);
    expect(graded.metrics.depthScore).toBeLessThan(levels.shallow);
  });
});
