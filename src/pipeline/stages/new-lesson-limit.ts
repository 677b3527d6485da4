import type { NewLessonLimit } from "../ports.js";
import type { ReflectedState } from "../processing-state.js";

/**
 * Stage "new-lesson limit": a tenant that floods distinct failures cannot fill the store. A
 * reflection memory would store as a new lesson counts one against the tenant's minute; past the
 * limit it is still judged and published, with its verdict, but not stored (`notStoredReason`
 * says why). A recurrence, a merge or a rewrite of a stored lesson is not new and never counted.
 */
export async function limitNewLessons(
  deps: { newLessons?: NewLessonLimit | undefined },
  state: ReflectedState,
): Promise<ReflectedState> {
  const { judged } = state;
  const gate = deps.newLessons;
  if (!gate || !judged || state.matched.known || judged.verdict === "rejected") return state;
  if (judged.storage.action !== "add") return state;
  const tenantId = state.facts.event.tenantId;
  const wait = await gate.limit.take(tenantId, 1);
  if (wait === null) return state;
  gate.refused?.(tenantId);
  const reason = `the tenant stored ${String(gate.limit.perMinute)} new lessons this minute (LESSONS_NEW_PER_MINUTE): published, not stored`;
  return { ...state, judged: { ...judged, storage: { action: "none", reason } } };
}
