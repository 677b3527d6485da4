import type pg from "pg";
import type { TaskCompleted } from "../../domain/contracts/index.js";
import { ReflectorError } from "../../domain/errors.js";
import { loopFamilyRoot } from "../../domain/guardrails/loop-family.js";
import type { LoopContext } from "../../pipeline/ports.js";

interface LoopContextRow {
  i: string;
  root_loop_id: string | null;
  rerun_depth: number;
  max_reruns: number;
  alignment: number | null;
  drift: number | null;
  reflection_fatigue: number;
  override_found: boolean;
  override_fatigue: boolean;
  override_max_reruns: boolean;
  overridden_by: string | null;
  family_reruns: number;
  bias_tags: string[] | null;
  bias_occurrences: number[] | null;
}

// One row per request, in the order of the arrays: $1 tenants, $2 each loop's parent (rerunOf,
// may be null), $3 each family's root when the parent's trace is unknown, $4 the loops, $5 each
// loop's bias tags as a JSON array. An override on the family's root covers all its reruns; the
// loop's own one wins.
const loopContextsSql = `
  SELECT r.i, p.root_loop_id, p.rerun_depth, p.max_reruns, p.alignment, p.drift, p.reflection_fatigue,
         o.loop_id IS NOT NULL AS override_found, o.override_fatigue, o.override_max_reruns, o.overridden_by,
         (SELECT count(*)::int FROM loop_traces t
           WHERE t.tenant_id = r.tenant_id AND t.root_loop_id = f.root AND t.rerun_of IS NOT NULL
             AND t.loop_id <> r.loop_id
         ) AS family_reruns,
         b.tags AS bias_tags, b.occurrences AS bias_occurrences
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
           WITH ORDINALITY AS r(tenant_id, rerun_of, root, loop_id, tags, i)
    LEFT JOIN loop_traces p ON p.tenant_id = r.tenant_id AND p.loop_id = r.rerun_of
    CROSS JOIN LATERAL (SELECT coalesce(p.root_loop_id, r.root) AS root) f
    LEFT JOIN LATERAL (
      SELECT loop_id, override_fatigue, override_max_reruns, overridden_by FROM loop_overrides
       WHERE tenant_id = r.tenant_id AND loop_id IN (r.loop_id, f.root)
       ORDER BY (loop_id = r.loop_id) DESC LIMIT 1
    ) o ON true
    CROSS JOIN LATERAL (
      SELECT array_agg(tag) AS tags, array_agg(occurrences) AS occurrences FROM bias_tag_history
       WHERE tenant_id = r.tenant_id
         AND tag = ANY(ARRAY(SELECT jsonb_array_elements_text(r.tags::jsonb)))
    ) b`;

function toLoopContext(row: LoopContextRow): LoopContext {
  return {
    previous:
      row.root_loop_id !== null
        ? {
            rootLoopId: row.root_loop_id,
            rerunDepth: row.rerun_depth,
            maxReruns: row.max_reruns,
            alignment: row.alignment,
            drift: row.drift,
            fatigue: row.reflection_fatigue,
          }
        : null,
    override: row.override_found
      ? {
          overrideFatigue: row.override_fatigue,
          overrideMaxReruns: row.override_max_reruns,
          overriddenBy: row.overridden_by,
        }
      : null,
    biasHistory: new Map((row.bias_tags ?? []).map((tag, i) => [tag, row.bias_occurrences?.[i] ?? 0])),
    familyReruns: row.family_reruns,
  };
}

/**
 * The loop contexts of the events that ask in the same turn of the event loop, read by one
 * statement (one round trip, one plan's execution) instead of one each: in a drain, the events a
 * fetch hands out start together. At most `maxEvents` a statement; a failing statement fails every
 * event that asked in it (each retries as its own failure would).
 */
export function createLoopContextBatch(pool: pg.Pool, options: { maxEvents: number }) {
  interface Waiting {
    event: TaskCompleted;
    resolve: (context: LoopContext) => void;
    reject: (err: unknown) => void;
  }
  let queue: Waiting[] = [];

  async function read(batch: Waiting[]): Promise<void> {
    try {
      const res = await pool.query<LoopContextRow>({
        name: "reflector-loop-contexts",
        text: loopContextsSql,
        values: [
          batch.map((w) => w.event.tenantId),
          batch.map((w) => w.event.rerunOf ?? null),
          batch.map((w) => loopFamilyRoot(w.event)),
          batch.map((w) => w.event.loopId),
          batch.map((w) => JSON.stringify([...new Set((w.event.biasTags ?? []).map((t) => t.tag))])),
        ],
      });
      const byIndex = new Map(res.rows.map((row) => [Number(row.i) - 1, row]));
      batch.forEach((waiting, i) => {
        const row = byIndex.get(i);
        if (row) waiting.resolve(toLoopContext(row));
        else waiting.reject(new ReflectorError("INTERNAL", "loop context query returned no row"));
      });
    } catch (err) {
      for (const waiting of batch) waiting.reject(err);
    }
  }

  function flush(): void {
    const batch = queue;
    queue = [];
    for (let at = 0; at < batch.length; at += options.maxEvents)
      void read(batch.slice(at, at + options.maxEvents));
  }

  return {
    /** The event's loop context, read with the others asked for in this turn. */
    read(event: TaskCompleted): Promise<LoopContext> {
      return new Promise((resolve, reject) => {
        queue.push({ event, resolve, reject });
        if (queue.length === 1) setImmediate(flush);
      });
    },
  };
}
