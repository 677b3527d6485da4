/**
 * Splitting a merge: an operator names source failures of a lesson (the processed events filed
 * under it, as `GET /api/v1/reflections/{id}/sources` lists them) that do not share its root
 * cause, and they move out of it — into a lesson of their own (a copy of the lesson's text the
 * operator can then judge on its own) or back to unassigned (the next recurrence gets a fresh
 * lesson). A merged signature whose every failure moves goes with them, so recurrences under it
 * no longer reach the old lesson; the lesson's own signature stays with it. One transaction.
 */

export type SplitTarget = "new_lesson" | "unassigned";
export const splitTargets: readonly SplitTarget[] = ["new_lesson", "unassigned"];

export interface SplitRequest {
  tenantId: string;
  lessonId: string;
  eventIds: readonly string[];
  to: SplitTarget;
  /**
   * Who asked, as the audit records it: the API key's fingerprint (`api-key:<sha256 prefix>`,
   * never the key) or the operator at the command line (`cli:<user>`).
   */
  actor?: string;
}

/** One split as the audit table keeps it: who, when, which sources moved, from which lesson to which. */
export interface SplitRecord {
  id: string;
  lessonId: string;
  /** Null when the sources went back to unassigned. */
  newLessonId: string | null;
  to: SplitTarget;
  moved: string[];
  signaturesMoved: string[];
  /** Sources the lesson still stood for after the split. */
  remaining: number;
  actor: string;
  at: Date;
}

export interface SplitAuditQuery {
  /** Only the splits of this lesson, as the one split or the one split into. */
  lessonId?: string;
  /** Newest first, at most this many. */
  limit: number;
}

export const maxSplitAuditRows = 500;

export type SplitResult =
  | {
      status: "split";
      lessonId: string;
      /** The lesson the failures moved to; null when they went back to unassigned. */
      newLessonId: string | null;
      moved: string[];
      /** Sources the lesson still stands for. */
      remaining: number;
      /** Merged signatures that moved with the failures (they no longer find the old lesson). */
      signaturesMoved: string[];
    }
  | { status: "not_found" }
  /** Named events that are not sources of this lesson (of another lesson, unknown, or another tenant's). */
  | { status: "not_sources"; missing: string[] }
  /** Every source was named: the lesson would stand for nothing. */
  | { status: "all_sources"; sources: number };

export interface LessonSplitStore {
  /** Splits and records the split in the audit table, in one transaction. */
  splitSources(request: SplitRequest): Promise<SplitResult>;
  /** The tenant's recorded splits, newest first. */
  listSplits(tenantId: string, query: SplitAuditQuery): Promise<SplitRecord[]>;
}

export const maxSplitSources = 100;
// An event id as the contract allows it: 1 to 200 characters, no control characters.
// eslint-disable-next-line no-control-regex
const eventIdPattern = /^[^\u0000-\u001f\u007f]{1,200}$/;

/**
 * Event ids as an operator types them (`a,b, c`): trimmed, in order, each once. Errors name the
 * offending value; nothing is dropped silently.
 */
export function parseSourceIds(list: string): { ids: string[] } | { error: string } {
  const raw = list.split(",").map((s) => s.trim());
  if (raw.every((s) => s === "")) return { error: "name at least one source event id" };
  const empty = raw.findIndex((s) => s === "");
  if (empty >= 0) return { error: `source ${String(empty + 1)} of the list is empty` };
  return checkSourceIds(raw);
}

/** The same checks on a list that arrived as one (the API's body). */
export function checkSourceIds(ids: readonly string[]): { ids: string[] } | { error: string } {
  if (ids.length === 0) return { error: "name at least one source event id" };
  const bad = ids.find((id) => !eventIdPattern.test(id));
  if (bad !== undefined)
    return {
      error: `not an event id: ${JSON.stringify(bad.slice(0, 60))} (1 to 200 characters, no control characters)`,
    };
  const seen = new Set<string>();
  const dup = ids.find((id) => (seen.has(id) ? true : (seen.add(id), false)));
  if (dup !== undefined) return { error: `event id ${dup} is named twice` };
  if (ids.length > maxSplitSources)
    return { error: `at most ${String(maxSplitSources)} sources per split (got ${String(ids.length)})` };
  return { ids: [...ids] };
}

/** What an operator reads when a split is refused; null when it went through. */
export function splitRefusal(result: SplitResult, lessonId: string): string | null {
  switch (result.status) {
    case "split":
      return null;
    case "not_found":
      return `no lesson ${lessonId} for this tenant`;
    case "not_sources":
      return `not sources of lesson ${lessonId}: ${result.missing.join(", ")} (list them with its sources)`;
    case "all_sources":
      return `that names all ${String(result.sources)} sources of lesson ${lessonId}: the lesson would stand for nothing; name fewer`;
  }
}
