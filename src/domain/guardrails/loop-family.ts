import { rerunSuffix } from "../contracts/task-completed.js";

/**
 * A loop family: a root loop and its reruns, named `<root>_r<n>` with `rerunOf` naming the parent.
 * When the parent's trace is known, its recorded root wins; these rules place a loop whose parent
 * is not (yet) known. The one definition for decideLoop, the Postgres loop context and the
 * consumer's per-family ordering.
 */

/** The family root: the loop itself unless it is a rerun, else its parent's id without `_r<n>`. */
export function loopFamilyRoot(loop: { loopId: string; rerunOf?: string | undefined }): string {
  return loop.rerunOf === undefined ? loop.loopId : loop.rerunOf.replace(rerunSuffix, "");
}

/** How deep in its family a loop sits, by its id: 0 for a root, `n` for `<root>_r<n>`, else 1. */
export function rerunDepthFromId(loop: { loopId: string; rerunOf?: string | undefined }): number {
  if (loop.rerunOf === undefined) return 0;
  return Number(rerunSuffix.exec(loop.loopId)?.[1] ?? "1");
}
