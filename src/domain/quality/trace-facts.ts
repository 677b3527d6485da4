import type { TaskCompleted } from "../contracts/index.js";

/**
 * What a task's trace holds, in the form the judge checks an analysis against: its whole text
 * (task, error, every step with its agent, tool and error), the words in it, the agents and tools
 * by name, the step ids and how many steps there are. Built once per judged event.
 */
export interface TraceFacts {
  /** Lower-cased text with whitespace collapsed; quotes and values are looked up in it. */
  text: string;
  /**
   * The same for the task statement alone (description, goal, question): what an analysis can
   * restate without having read the run, so naming it grounds nothing.
   */
  taskText: string;
  /** The task statement proper (description, goal, question), without the user's or system's steps. */
  statement: string;
  /** The run alone: every step and the error, without the task statement. */
  runText: string;
  /** Per step, lower-cased: its agent, its tool and its whole text (to check "step 12 (WebSurfer) …"). */
  steps: readonly { actor: string; tool: string; text: string }[];
  /** Lower-cased words (letters, digits, `_`, `.`, `-` inside a word) of the text. */
  words: ReadonlySet<string>;
  /** Agents (`actor`) and tools (`toolName`), lower-cased, without names every trace has. */
  names: ReadonlySet<string>;
  /** Step ids (`eventId`), lower-cased. */
  stepIds: ReadonlySet<string>;
  /**
   * Field names of the structured data the run carries (`"reservation_id":` in a tool call's
   * arguments or a tool's output), lower-cased: the vocabulary of the tools' interface, which any
   * lesson about the same tool may use.
   */
  fields: ReadonlySet<string>;
  stepCount: number;
  /**
   * Steps no agent of the team produced and none can correct: the user's (or a human's) messages
   * and system events such as the task statement. A failure is not attributed to them.
   */
  outsideTeam: ReadonlySet<number>;
}

/** Agent names that every trace of their system has: naming one says nothing about this trace. */
const genericNames = new Set(["agent", "user", "system", "human", "assistant", "tool", "model", "llm"]);

/** Who speaks for the people the team serves, not for the team. */
const outsiders = new Set(["user", "human", "customer", "client"]);

/** A step no agent of the team produced: the task statement or system text, the user's message. */
export function isOutsideTeam(step: { type: string; actor?: string | undefined }): boolean {
  return step.type === "system_event" || outsiders.has((step.actor ?? "").trim().toLowerCase());
}

/**
 * A key of a JSON object as the squashed run text holds it: `"user_id":`. A key with a digit is
 * data used as a key (`"credit_card_4421":`), not a name of the interface.
 */
const fieldName = /"([\p{L}_]{1,64})"\s?:/gu;

/**
 * Text as compared for grounding: lower case, one space for any run of white space, and one form
 * for the look-alike hyphens and quote marks that models and traces write differently
 * ("back‑of‑the‑envelope" with U+2011 is the trace's "back-of-the-envelope").
 */
export function comparable(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2010-\u2015\u2212\ufe63\uff0d]/g, "-")
    .replace(/[\u2018\u2019\u201b\u2032]/g, "'")
    .replace(/\s+/g, " ");
}

const squash = comparable;

/** Words of a text: runs of letters and digits, keeping `_`, `.`, `-` and `/` between them. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:[._\-/][\p{L}\p{N}]+)*/gu) ?? [];
}

export function traceFacts(event: TaskCompleted): TraceFacts {
  // Every part is lower-cased and squashed once, as it is added: traces run to megabytes.
  const task = [event.task.description, event.task.goal ?? "", event.task.query ?? ""].map(squash);
  const run: string[] = [squash(event.task.answer ?? "")];
  const steps: { actor: string; tool: string; text: string }[] = [];
  if (event.error)
    run.push(
      squash(
        [event.error.category, event.error.type, event.error.code, event.error.message]
          .filter(Boolean)
          .join(" "),
      ),
    );
  const names = new Set<string>();
  const stepIds = new Set<string>();
  const outsideTeam = new Set<number>();
  for (const [i, step] of event.events.entries()) {
    if (isOutsideTeam(step)) outsideTeam.add(i);
    const line = squash(
      [step.eventId, step.actor, step.toolName, step.error?.code, step.error?.message, step.content]
        .filter(Boolean)
        .join(" "),
    );
    // What the user or the task statement says is the task's, not the team's run.
    if (outsideTeam.has(i)) task.push(line);
    else run.push(line);
    steps.push({
      actor: (step.actor ?? "").toLowerCase(),
      tool: (step.toolName ?? "").toLowerCase(),
      text: line,
    });
    if (step.metadata) run.push(squash(JSON.stringify(step.metadata)));
    for (const name of [step.actor, step.toolName])
      if (name && !genericNames.has(name.toLowerCase())) names.add(name.toLowerCase());
    stepIds.add(step.eventId.toLowerCase());
  }
  for (const v of event.verificationResults ?? [])
    run.push(squash(v.claimText ?? ""), squash(v.conflictReason ?? ""));
  if (event.scores) run.push(squash(JSON.stringify(event.scores)));
  if (event.error?.context) run.push(squash(JSON.stringify(event.error.context)));
  if (event.evaluation?.critique) run.push(squash(event.evaluation.critique));
  const statement = task.slice(0, 3).join("\n");
  const taskText = task.join("\n");
  const runText = run.join("\n");
  const fields = new Set<string>();
  for (const match of runText.matchAll(fieldName)) if (match[1]) fields.add(match[1]);
  return {
    text: `${taskText}\n${runText}`,
    taskText,
    statement,
    runText,
    steps,
    words: new Set([...wordsOf(taskText), ...wordsOf(runText)]),
    names,
    stepIds,
    fields,
    stepCount: event.events.length,
    outsideTeam,
  };
}

/**
 * Facts of a task given only as text (the `score` command without a trace): no steps, no agents,
 * so only the values and quotes the text holds can ground an analysis.
 */
export function textFacts(text: string): TraceFacts {
  const squashed = squash(text);
  return {
    text: squashed,
    taskText: "",
    statement: "",
    runText: squashed,
    steps: [],
    words: new Set(wordsOf(squashed)),
    names: new Set(),
    stepIds: new Set(),
    fields: new Set(),
    stepCount: 0,
    outsideTeam: new Set(),
  };
}
