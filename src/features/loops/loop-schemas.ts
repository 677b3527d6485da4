import { z } from "zod";
import { Outcome } from "../../domain/contracts/index.js";
import { boundedName, rerunNumberProblem, storableText } from "../../domain/contracts/task-completed.js";

// Names refuse control characters and lone surrogates; free text is made storable (no NUL byte).
const id = boundedName(200);
const unit = z.number().min(0).max(1);

/** `POST /orchestrator/loop-complete`: an orchestrator's end-of-loop report. */
export const LoopCompleteBody = z
  .strictObject({
    loop_id: id,
    project_id: id.default("default"),
    rerun_of: id.optional(),
    // A loop is completed once its reflection is done; anything else is refused, as specified.
    reflection_status: z
      .literal("done", { error: "Invalid reflection status. Must be 'done'." })
      .default("done"),
    outcome: Outcome.optional(),
    alignment_score: unit.optional(),
    drift_score: unit.optional(),
    bias_tags: z.array(boundedName(100)).max(100).default([]),
    orchestrator_persona: boundedName(100).optional(),
    reflection_persona: boundedName(100).optional(),
    task: storableText(16_000).pipe(z.string().min(1)).optional(),
    override_fatigue: z.boolean().default(false),
    override_max_reruns: z.boolean().default(false),
    override_by: boundedName(200).nullable().default(null),
  })
  .superRefine((body, ctx) => {
    // The bound of the task event's contract, read the same way: no rerun number past it.
    for (const field of ["loop_id", "rerun_of"] as const) {
      const problem = rerunNumberProblem(body[field] ?? "");
      if (problem) ctx.addIssue({ code: "custom", path: [field], message: problem });
    }
  });
export type LoopCompleteBody = z.output<typeof LoopCompleteBody>;

export const OverrideBody = z.strictObject({
  override_fatigue: z.boolean().default(false),
  override_max_reruns: z.boolean().default(false),
  override_by: boundedName(200).nullable().default(null),
  override_reason: storableText(2_000).pipe(z.string().min(1)).nullable().default(null),
});

export const LoopIdParams = z.strictObject({ loopId: id });
