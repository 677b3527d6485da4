import type { z } from "zod";
import { LoopDecisionV1 } from "./loop-decision.js";
import { ReflectionFeedbackV1 } from "./reflection-feedback.js";
import { ReflectionOutcomeV1 } from "./reflection-outcome.js";
import { TaskCompletedV1 } from "./task-completed.js";

export * from "./loop-decision.js";
export * from "./parse-contract.js";
export * from "./reflection-feedback.js";
export * from "./reflection-outcome.js";
export * from "./task-completed.js";

/** Every contract, by the name its JSON Schema file and CloudEvents type carry. */
export const contracts = {
  "task-completed.v1": TaskCompletedV1,
  "reflection-outcome.v1": ReflectionOutcomeV1,
  "loop-decision.v1": LoopDecisionV1,
  "reflection-feedback.v1": ReflectionFeedbackV1,
} as const satisfies Record<string, z.ZodType>;

export type ContractName = keyof typeof contracts;

/** CloudEvents `type` attribute for each contract. */
export const cloudEventTypes = {
  "task-completed.v1": "dev.reflector.agent.task.completed.v1",
  "reflection-outcome.v1": "dev.reflector.reflection.outcome.v1",
  "loop-decision.v1": "dev.reflector.loop.decision.v1",
  "reflection-feedback.v1": "dev.reflector.reflection.feedback.v1",
} as const satisfies Record<ContractName, string>;
