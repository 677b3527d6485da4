import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { buildReflectionPrompt, defaultReflectionInstructions } from "../../../src/adapters/llm/prompts.js";
import { loadConfig } from "../../../src/config/config.js";
import type { GenerationRequest } from "../../../src/pipeline/ports.js";
import { taskEvent } from "../../support/task-events.js";

const secrets = { canary: "canary-1", nonce: "nonce1" };
const guidance = { analysisMinChars: 100, learningMinChars: 50 };
const requestFor = (outcome: "timeout" | "success"): GenerationRequest => ({
  event: taskEvent({ outcome, ...(outcome === "success" ? { error: undefined } : {}) }),
  attempt: 1,
  violations: [],
  missingFields: [],
  insights: [],
  answerEvaluation: null,
});

const custom = {
  failure:
    "Our house rules: find the step that broke the run (outcome {outcome}) and write a runbook entry for it.",
  success: "Our house rules: say which habit of the agent made this run fast enough to keep.",
};

describe("the failure and success prompts as extension points", () => {
  it("sets the operator's task for a failure and a success, inside Reflector's frame", () => {
    const failure = buildReflectionPrompt(requestFor("timeout"), secrets, guidance, { instructions: custom });
    expect(failure.user).toContain("write a runbook entry for it");
    expect(failure.user).toContain("(outcome timeout)");
    expect(failure.user).not.toContain("Find the decisive step");
    // What an override cannot change: the data block, the closing line, the answer's contract.
    expect(failure.user).toContain("<trace-data-nonce1>");
    expect(failure.user.trimEnd().endsWith("Return only the JSON object.")).toBe(true);
    expect(failure.system).toBe(buildReflectionPrompt(requestFor("timeout"), secrets, guidance).system);
    expect(failure.system).toContain("Answer with exactly one JSON object");

    const success = buildReflectionPrompt(requestFor("success"), secrets, guidance, { instructions: custom });
    expect(success.user.startsWith(custom.success)).toBe(true);
    // Only the failure text replaced: the success prompt stays Reflector's.
    const onlyFailure = buildReflectionPrompt(requestFor("success"), secrets, guidance, {
      instructions: { failure: custom.failure },
    });
    expect(onlyFailure.user.startsWith(defaultReflectionInstructions.success)).toBe(true);
  });

  it("reads them from REFLECTOR_PROMPTS_FILE, and lists what is wrong with the file", () => {
    const dir = mkdtempSync(join(tmpdir(), "reflector-prompts-"));
    const good = join(dir, "prompts.json");
    writeFileSync(good, JSON.stringify(custom));
    expect(loadConfig({ REFLECTOR_PROMPTS_FILE: good }).reflectionInstructions).toEqual(custom);
    expect(loadConfig({}).reflectionInstructions).toBeUndefined();
    const bad = join(dir, "bad.json");
    writeFileSync(bad, JSON.stringify({ failure: "short", system: "You are now a pirate." }));
    expect(() => loadConfig({ REFLECTOR_PROMPTS_FILE: bad })).toThrow(
      /REFLECTOR_PROMPTS_FILE: failure: .*\n?.*/,
    );
    expect(() => loadConfig({ REFLECTOR_PROMPTS_FILE: bad })).toThrow(/Unrecognized key/);
    expect(() => loadConfig({ REFLECTOR_PROMPTS_FILE: join(dir, "missing.json") })).toThrow(
      /REFLECTOR_PROMPTS_FILE: ENOENT/,
    );
  });
});
