import type pg from "pg";
import type { LoopStatus, OverrideInput, StoredOverride } from "../../domain/guardrails/loop-status.js";
import { withStoreErrors as guarded } from "./store-errors.js";

/**
 * The loops feature's queries: a loop's recorded decision and the operators' overrides. Every query
 * takes the caller's tenant and filters on it.
 */
export function createPgLoopStore(pool: pg.Pool, options: { clock?: { now(): Date } } = {}) {
  const clock = options.clock ?? { now: () => new Date() };
  return {
    guardrailsStatus: (tenantId: string, loopId: string) =>
      guarded(async (): Promise<LoopStatus | null> => {
        const res = await pool.query<{
          loop_id: string;
          root_loop_id: string;
          rerun_count: number;
          max_reruns: number;
          decision: string;
          new_loop_id: string | null;
          bias_echo: boolean;
          repeated_tags: string[];
          reflection_fatigue: number;
          fatigue_increased: boolean;
          force_finalize: boolean;
          rerun_reason: string;
          rerun_reason_detail: string;
          rerun_trigger: string[];
          overridden_by: string | null;
          alignment: number | null;
          drift: number | null;
          outcome: string;
          orchestrator_persona: string | null;
          reflection_persona: string | null;
          decided_at: Date;
        }>("SELECT * FROM loop_traces WHERE tenant_id = $1 AND loop_id = $2", [tenantId, loopId]);
        const r = res.rows[0];
        if (!r) return null;
        return {
          loopId: r.loop_id,
          rootLoopId: r.root_loop_id,
          rerunCount: r.rerun_count,
          maxReruns: r.max_reruns,
          decision: r.decision,
          newLoopId: r.new_loop_id,
          biasEcho: r.bias_echo,
          repeatedTags: r.repeated_tags,
          reflectionFatigue: r.reflection_fatigue,
          fatigueIncreased: r.fatigue_increased,
          forceFinalize: r.force_finalize,
          rerunReason: r.rerun_reason,
          rerunReasonDetail: r.rerun_reason_detail,
          rerunTrigger: r.rerun_trigger,
          overriddenBy: r.overridden_by,
          alignment: r.alignment,
          drift: r.drift,
          outcome: r.outcome,
          orchestratorPersona: r.orchestrator_persona,
          reflectionPersona: r.reflection_persona,
          decidedAt: r.decided_at.toISOString(),
        };
      }),

    findOverride: (tenantId: string, loopId: string) =>
      guarded(async (): Promise<StoredOverride | null> => {
        const res = await pool.query<{
          override_fatigue: boolean;
          override_max_reruns: boolean;
          overridden_by: string | null;
          override_reason: string | null;
          updated_at: Date;
        }>(
          `SELECT override_fatigue, override_max_reruns, overridden_by, override_reason, updated_at
             FROM loop_overrides WHERE tenant_id = $1 AND loop_id = $2`,
          [tenantId, loopId],
        );
        const r = res.rows[0];
        if (!r) return null;
        return {
          loopId,
          overrideFatigue: r.override_fatigue,
          overrideMaxReruns: r.override_max_reruns,
          overriddenBy: r.overridden_by,
          overrideReason: r.override_reason,
          updatedAt: r.updated_at.toISOString(),
        };
      }),

    /** The override applies to the next decision about `loopId` (the loop that is still to complete). */
    setOverride: (tenantId: string, loopId: string, input: OverrideInput) =>
      guarded(async (): Promise<StoredOverride> => {
        const res = await pool.query<{ updated_at: Date }>(
          `INSERT INTO loop_overrides (tenant_id, loop_id, override_fatigue, override_max_reruns, overridden_by,
             override_reason, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (tenant_id, loop_id) DO UPDATE SET override_fatigue = EXCLUDED.override_fatigue,
             override_max_reruns = EXCLUDED.override_max_reruns, overridden_by = EXCLUDED.overridden_by,
             override_reason = EXCLUDED.override_reason, updated_at = EXCLUDED.updated_at
           RETURNING updated_at`,
          [
            tenantId,
            loopId,
            input.overrideFatigue,
            input.overrideMaxReruns,
            input.overriddenBy,
            input.overrideReason,
            clock.now(),
          ],
        );
        return { loopId, ...input, updatedAt: (res.rows[0]?.updated_at ?? clock.now()).toISOString() };
      }),
  };
}
