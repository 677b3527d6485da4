import { readFileSync } from "node:fs";
import { z } from "zod";

/**
 * REFLECTOR_PROMPTS_FILE: the extension point of the `openai` generator's failure and success
 * prompts (docs/configuration.md#prompts): a JSON file `{"failure": "…", "success": "…"}` (either
 * may be left out) whose texts replace the task the model is set. Read and checked once at start-up,
 * so that every problem is listed with the rest.
 */
export const promptSettingsEnv = {
  REFLECTOR_PROMPTS_FILE: z.string().min(1).optional(),
};

/** The operator's instructions; absent keys keep Reflector's own (src/adapters/llm/prompts.ts). */
export interface ReflectionInstructionsSetting {
  failure?: string;
  success?: string;
}

const instruction = z.string().trim().min(20).max(4_000);
const PromptsFile = z.strictObject({ failure: instruction.optional(), success: instruction.optional() });

export function reflectionInstructionsOf(file: string | undefined): {
  instructions: ReflectionInstructionsSetting | undefined;
  problems: string[];
} {
  if (file === undefined) return { instructions: undefined, problems: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    return { instructions: undefined, problems: [`REFLECTOR_PROMPTS_FILE: ${(err as Error).message}`] };
  }
  const parsed = PromptsFile.safeParse(raw);
  if (!parsed.success) {
    return {
      instructions: undefined,
      problems: parsed.error.issues.map(
        (i) => `REFLECTOR_PROMPTS_FILE: ${i.path.join(".") || "(file)"}: ${i.message}`,
      ),
    };
  }
  const { failure, success } = parsed.data;
  return {
    instructions: { ...(failure ? { failure } : {}), ...(success ? { success } : {}) },
    problems: [],
  };
}
