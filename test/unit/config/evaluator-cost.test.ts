import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/config.js";
import { evaluatorCostWarning } from "../../../src/config/llm-settings.js";

const model = { REFLECTOR_GENERATOR: "openai", REFLECTOR_MODEL: "big-model", OPENAI_API_KEY: "sk-test" };

describe("the answer self-evaluation's cost settings", () => {
  it("caps an evaluation's answer at 500 tokens by default (REFLECTOR_EVALUATOR_MAX_TOKENS)", () => {
    expect(loadConfig({}).openai.evaluatorMaxTokens).toBe(500);
    expect(loadConfig({ REFLECTOR_EVALUATOR_MAX_TOKENS: "800" }).openai.evaluatorMaxTokens).toBe(800);
    expect(() => loadConfig({ REFLECTOR_EVALUATOR_MAX_TOKENS: "10" })).toThrow(
      /REFLECTOR_EVALUATOR_MAX_TOKENS/,
    );
  });

  it("warns at start-up when the evaluation would run on the generator's model", () => {
    expect(evaluatorCostWarning(loadConfig(model))).toMatch(
      /runs on REFLECTOR_MODEL \(big-model\).*REFLECTOR_EVALUATOR_MODEL/,
    );
    expect(
      evaluatorCostWarning(loadConfig({ ...model, REFLECTOR_EVALUATOR_MODEL: "light-model" })),
    ).toBeNull();
    expect(evaluatorCostWarning(loadConfig({}))).toBeNull();
  });
});
