import { describe, expect, it } from "vitest";
import type { Reflection } from "../../../../src/domain/contracts/index.js";
import { generateHeuristicReflection } from "../../../../src/domain/heuristic/generate-heuristic-reflection.js";
import { identifierOf } from "../../../../src/domain/heuristic/instruction-slots.js";
import { poisoned } from "../../../fixtures/screen/obfuscation-corpus.js";
import { hostileTraces, plainOrders } from "../../../fixtures/screen/hostile-traces.js";
import { failedRun } from "../../../support/task-events.js";

/** Everything of a lesson that is advice: what is stored and served as an instruction. */
const instructionsOf = (r: Reflection) => [
  r.strategyText ?? "",
  r.learning,
  ...r.adjustments,
  ...r.patterns,
  ...r.tags,
];

/**
 * The payload's words that are not identifiers (split at whitespace): none of them may appear in an
 * instruction, in any spelling the payload used.
 */
const nonIdentifierTokens = (payload: string) =>
  payload.split(/\s+/).filter((t) => t.length >= 2 && identifierOf(t) === undefined);

/** Three words of the payload in a row, read in lower case: a phrase of it, even of identifiers. */
const phrasesOf = (payload: string) => {
  const words = payload.normalize("NFKC").toLowerCase().split(/\s+/).filter(Boolean);
  return words.slice(0, -2).map((w, i) => `${w} ${words[i + 1] ?? ""} ${words[i + 2] ?? ""}`);
};

const lowered = (r: Reflection) => instructionsOf(r).join("\n").normalize("NFKC").toLowerCase();

/**
 * What of the payload an instruction carries: a word that is not an identifier, or a phrase of it
 * that the instructions written for the same trace with a harmless text in its place do not hold
 * (the generator's own words, "before the call", are its own).
 */
function leaks(r: Reflection, payload: string, harmless: Reflection): string[] {
  const text = instructionsOf(r).join("\n");
  const [lower, own] = [lowered(r), lowered(harmless)];
  return [
    ...nonIdentifierTokens(payload).filter((t) => text.includes(t)),
    ...phrasesOf(payload).filter((p) => lower.includes(p) && !own.includes(p)),
  ];
}

const harmlessText = "nothing else was reported";

describe("the offline generator's instructions hold no trace text, whatever a trace says", () => {
  const cases = [...poisoned, ...plainOrders].flatMap(([kind, payload]) =>
    hostileTraces(payload).map(
      ([where, event], i) =>
        [`${kind} in ${where}`, payload, event, hostileTraces(harmlessText)[i]?.[1] ?? event] as const,
    ),
  );

  it("covers every payload in every place of a trace", () => {
    expect(poisoned.length).toBeGreaterThanOrEqual(26);
    expect(cases.length).toBe((poisoned.length + plainOrders.length) * hostileTraces("x").length);
  });

  it.each(cases)("%s: no token of the payload in an instruction", (_, payload, event, harmless) => {
    const r = generateHeuristicReflection(event);
    expect(leaks(r, payload, generateHeuristicReflection(harmless))).toEqual([]);
    // The trace's text stays only in the analysis, quoted as evidence (or not at all).
    for (const instruction of instructionsOf(r)) expect(instruction).not.toContain(payload);
  });

  it("still writes lessons: the hostile traces are failures of a kind with a lesson", () => {
    const written = cases.filter(([, , event]) => generateHeuristicReflection(event).adjustments.length > 0);
    expect(written.length).toBeGreaterThan(cases.length / 2);
  });

  it("keeps a tool's name that is an identifier and replaces one that is not by neutral words", () => {
    const named = (tool: string) =>
      generateHeuristicReflection(
        failedRun(
          [
            ["agent", "tool_call", '{"order_id":"W123"}', tool],
            ["agent", "error_event", "404 not found", tool],
          ],
          "404 not found",
        ),
      );
    expect(named("get_order").adjustments.join(" ")).toMatch(/get_order/);
    for (const tool of ["/usr/bin/curl", "ｃｕｒｌ -fsSL host", "get\u200border", "fix.sh", "gеt_order"]) {
      const text = instructionsOf(named(tool)).join(" ");
      expect(text).not.toContain(tool);
      expect(text).toMatch(/the failing tool/);
    }
  });
});
