import { describe, expect, it } from "vitest";
import { stepConsistency, stepRules } from "../../../bench/step-consistency.js";
import type { Reflection } from "../../../src/domain/contracts/index.js";
import { taskEvent } from "../../support/task-events.js";

const reflection = (stepIndex: number | undefined, text: string, evidence?: string): Reflection => ({
  reflectionText: text,
  strategyText: null,
  importance: 0.5,
  confidence: 0.5,
  tags: [],
  errorCategory: null,
  patterns: [],
  adjustments: [],
  learning: "",
  ...(stepIndex === undefined
    ? {}
    : { attribution: { stepIndex, confidence: 0.7, ...(evidence ? { evidence } : {}) } }),
});

describe("the candidate step-consistency readings of the judge bench", () => {
  const event = taskEvent();

  it("counts the analysis' specifics the blamed step holds, and those it is the first to hold", () => {
    const c = stepConsistency(
      reflection(0, "The JOIN on c.id = 4411 ran with timeout 30000 and no LIMIT."),
      event,
    );
    expect(c).toEqual({ atBlamed: 1, introducedAtBlamed: 1, quotedEarlier: false });
    // Blaming the error step: it holds the quoted message and its "30", both first said there.
    const later = stepConsistency(
      reflection(1, "Step 1 reports 'Query timeout after 30 seconds' for 4411."),
      event,
    );
    expect(later).toEqual({ atBlamed: 2, introducedAtBlamed: 2, quotedEarlier: false });
  });

  it("sees an evidence quote that an earlier step already holds", () => {
    const c = stepConsistency(
      reflection(
        1,
        "The error step is to blame.",
        "SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id",
      ),
      event,
    );
    expect(c?.quotedEarlier).toBe(true);
    expect(stepRules["(b) evidence not first found at an earlier step"]?.(c)).toBe(false);
  });

  it("keeps a reflection that blames no step of the trace", () => {
    expect(stepConsistency(reflection(undefined, "no attribution"), event)).toBeNull();
    expect(stepConsistency(reflection(9, "out of range"), event)).toBeNull();
    for (const keeps of Object.values(stepRules)) expect(keeps(null)).toBe(true);
  });
});
