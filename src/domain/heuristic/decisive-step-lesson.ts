import type { LocatedFailure } from "../attribution/attribute-failure.js";
import type { TaskCompleted, TraceEvent } from "../contracts/index.js";

/**
 * A lesson about the decisive step of a failure that no error explains: the first call that
 * changed state (a booking, a cancellation, a refund) committed the run to the wrong outcome. The
 * trace cannot say which argument was wrong, but it shows where each argument came from: what
 * the user said, what an earlier tool returned, or neither (the agent's own choice). The lesson is
 * about that call and those arguments, so two tasks that fail on different calls, or on the same
 * call with differently sourced arguments, get different lessons.
 */
export interface DecisiveStepLesson {
  found: string;
  adjustments: string[];
  learning: string;
  tags: string[];
  patterns: string[];
  /** The argument names the agent filled without the user stating their value, sorted. */
  unstated: string[];
}

export interface Leaf {
  path: string;
  value: string;
}

export const userActor = /^(user|human|customer|client)$/i;
const short = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export function parseArguments(content: string): unknown {
  try {
    return JSON.parse(content) as unknown;
  } catch {
    return null;
  }
}

/** The scalar arguments of a call, by path (`payment_methods[].payment_id`). */
export function leavesOf(value: unknown, path = ""): Leaf[] {
  if (Array.isArray(value)) return value.flatMap((v) => leavesOf(v, `${path}[]`));
  if (value && typeof value === "object")
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) =>
      leavesOf(v, path ? `${path}.${k}` : k),
    );
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    return [{ path: path || "value", value: String(value) }];
  return [];
}

/** Whether a value is said in a text: as a word, case aside (a number or id, not a substring of one). */
export function says(text: string, value: string): boolean {
  if (value.length < 2) return false;
  const escaped = value.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^\\p{L}\\p{N}])${escaped}($|[^\\p{L}\\p{N}])`, "u").test(text.toLowerCase());
}

/** The top-level argument an argument path belongs to (`payment_methods[].amount` → `payment_methods`). */
const topOf = (path: string) => path.replace(/\[\]/g, "").split(".")[0] ?? path;

export function decisiveStepLesson(located: LocatedFailure, event: TaskCompleted): DecisiveStepLesson | null {
  if (located.basis !== "first_state_change" || located.stepIndex === undefined) return null;
  const step = event.events[located.stepIndex];
  if (!step?.toolName) return null;
  const tool = step.toolName;
  const before = event.events.slice(0, located.stepIndex);
  const userText = before
    .filter((e) => e.actor && userActor.test(e.actor))
    .map((e) => e.content)
    .join("\n");
  const toolText = before
    .filter((e: TraceEvent) => e.type === "tool_response")
    .map((e) => e.content)
    .join("\n");
  const leaves = leavesOf(parseArguments(step.content));
  const stated = leaves.filter((l) => says(userText, l.value));
  const looked = leaves.filter((l) => !says(userText, l.value) && says(toolText, l.value));
  const unseen = leaves.filter((l) => !says(userText, l.value) && !says(toolText, l.value));
  const unstatedTops = [...new Set([...looked, ...unseen].map((l) => topOf(l.path)))].sort();
  const statedTops = [...new Set(stated.map((l) => topOf(l.path)))]
    .filter((t) => !unstatedTops.includes(t))
    .sort();
  const show = (ls: Leaf[]) =>
    ls
      .slice(0, 4)
      .map((l) => `\`${l.path}\` = \`${short(l.value.replace(/[`"]/g, ""), 40)}\``)
      .join(", ");
  const firstUser = event.events.find((e) => e.actor && userActor.test(e.actor))?.content ?? "";
  const request = firstUser ? `"${short(firstUser.replace(/\s+/g, " ").trim(), 110)}"` : "the user's request";
  const where = `step ${String(located.stepIndex)} (${step.eventId}), \`${tool}\``;
  const parts = [
    `the first call that changed state was ${where}${leaves.length ? ` with ${show(leaves)}` : ""}`,
    stated.length ? `the user had stated ${show(stated)}` : "",
    looked.length
      ? `${show(looked)} came only from earlier tool output, so the agent chose ${looked.length > 1 ? "them" : "it"} without the user confirming`
      : "",
    unseen.length
      ? `${show(unseen)} appears in no user message nor earlier tool output before the call, so the agent assumed ${unseen.length > 1 ? "them" : "it"}`
      : "",
    looked.length || unseen.length
      ? "the run ended in the wrong state after this call"
      : `the agent relied on the user's words and did not check the policy's conditions for \`${tool}\`, which led to the wrong final state`,
  ].filter(Boolean);
  const found = parts.join("; ");
  const keys = unstatedTops.map((k) => `\`${k}\``).join(", ");
  if (unstatedTops.length > 0)
    return {
      found,
      learning:
        `Before \`${tool}\`, check ${keys} against what the user asked (${request}) and confirm ${unstatedTops.length > 1 ? "them" : "it"} with the user: ` +
        `the agent filled ${unstatedTops.length > 1 ? "them" : "it"} itself and the task failed on that call.`,
      adjustments: [
        `add constraint: before calling ${tool}, read back ${unstatedTops.join(", ")} to the user and wait for an explicit yes`,
        `change the source of ${unstatedTops.join(", ")} for ${tool} from the agent's choice to values the user stated or confirmed`,
        `add constraint: compare each ${tool} argument with the user's stated preferences and the policy before the call`,
      ],
      tags: [tool, "decisive-step", "unconfirmed-arguments"],
      patterns: [`${tool} with ${unstatedTops.join(", ")} the user did not state`],
      unstated: unstatedTops,
    };
  return {
    found,
    learning:
      `Before \`${tool}\`, check that this action is what the user asked (${request}) and that the policy allows it: ` +
      `every argument${statedTops.length ? ` (${statedTops.map((k) => `\`${k}\``).join(", ")})` : ""} came from the user, yet the task failed on that call.`,
    adjustments: [
      `add constraint: before calling ${tool}, restate the action and its effect to the user and wait for an explicit yes`,
      `add constraint: check the policy's conditions for ${tool} against the records read in this session before the call`,
    ],
    tags: [tool, "decisive-step", "unwanted-action"],
    patterns: [`${tool} the user did not ask for`],
    unstated: [],
  };
}
