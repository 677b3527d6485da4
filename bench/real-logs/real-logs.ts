/**
 * Real agent failure logs that no one on this project wrote, read from where they were fetched and
 * turned into `agent.task.completed` events with the labels their authors published. The logs are
 * never committed; a benchmark that needs them reads the folder named by `REFLECTOR_REAL_LOGS_DIR`
 * and says plainly when it is absent.
 *
 * Sources (each under its own sub-folder of `REFLECTOR_REAL_LOGS_DIR`):
 * - `who-and-when/Who&When/{Hand-Crafted,Algorithm-Generated}/*.json`: the Who&When failure
 *   attribution set (Zhang et al., "Which Agent Causes Task Failures and When?", ICML 2025; the
 *   `Who&When` folder of github.com/ag2ai/Agents_Failure_Attribution). 58 Magentic-One runs
 *   (web-browsing team, 5–130 steps) and 126 AG2 CaptainAgent runs (coding teams, 5–10 steps),
 *   each failed, each annotated by people with the mistaken agent, the decisive step and a reason.
 * - `tau-bench/gpt-4o-airline.json`: τ-bench's published gpt-4o airline trajectories (Yao et al.,
 *   2024; `historical_trajectories/` of github.com/sierra-research/tau-bench): 50 tasks × 4
 *   trials of a tool-calling customer-service agent. The label of a failed run is derived from
 *   the task's published expected actions, not by Reflector: the decisive step is the agent's
 *   first write call that the task did not call for.
 * - `tau2-bench/airline-tasks.json` (optional): τ²-bench's airline tasks (Barres et al., 2025;
 *   `data/tau2/domains/airline/tasks.json` of github.com/sierra-research/tau2-bench), read only
 *   for why each task's user calls (`loadTau2AirlineTasks`); no runs, so no failures.
 * - `tau-bench/few-shot-airline.jsonl` and `new-tau-bench/revised_tasks_test.py` (optional): the
 *   opening requests of τ-bench's airline few-shot conversations (`few_shot_data/
 *   MockAirlineDomainEnv-few_shot.jsonl` of github.com/sierra-research/tau-bench), and the airline
 *   task instructions that neo-τ-bench rewrote by hand (`tau_bench/envs/airline/revised_tasks_test.py`
 *   of github.com/yiphei/new-tau-bench); read as requests only (`loadLaterAirlineRequests`).
 *
 * Step indexes: `events[i]` of the event is the log's i-th entry (Who&When's `mistake_step` indexes
 * its `history`), so an attribution's `stepIndex` compares with the label directly.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TaskCompleted, TraceEvent } from "../../src/domain/contracts/index.js";
import { loadHeldOutSources } from "./held-out-sources.js";

export const realLogsSetting = "REFLECTOR_REAL_LOGS_DIR";

export type RealLogSource =
  | "who-and-when/hand-crafted"
  | "who-and-when/algorithm-generated"
  | "tau-bench/airline"
  | "agentrx/tau-retail"
  | "agentrx/magentic-one"
  | "agenterrorbench/gaia"
  | "agentprocessbench/hotpotqa"
  | "aftraj/travelplanner"
  | "aftraj/web-code-service";

export interface RealFailure {
  /** Stable id: source and file or task/trial. */
  id: string;
  source: RealLogSource;
  event: TaskCompleted;
  label: {
    /** The agent that made the decisive mistake, as the source names it. */
    agent: string | undefined;
    /** Index into `event.events` of the decisive step; undefined when the source gives none. */
    step: number | undefined;
    /** The annotators' one-line reason (Who&When) or the derivation (τ-bench). */
    reason: string;
    /** τ-bench: every write call that is not among the task's expected actions (a wrong write). */
    unexpectedWrites?: number[];
  };
  /** For τ-bench: the task id, so that repeated failures of one task can be grouped. */
  taskKey: string;
  /** Deterministic split: about a third of every source is held out from tuning. */
  split: "tune" | "holdout";
}

/**
 * What a source is and whether anything was tuned on it. `tuned`: the offline rules' thresholds and
 * confidences were chosen on its runs (the `tune` split only, but its `holdout` split was read
 * often enough that it is no longer blind). Every other source is held out: nothing was chosen on it.
 */
export function sourceInfo(source: string): { tuned: boolean; what: string } {
  switch (source) {
    case "who-and-when/hand-crafted":
      return { tuned: true, what: "Magentic-One web-research team (Who&When, people's labels)" };
    case "who-and-when/algorithm-generated":
      return { tuned: true, what: "AG2 CaptainAgent coding/maths teams (Who&When, people's labels)" };
    case "tau-bench/airline":
      return {
        tuned: true,
        what: "gpt-4o tool-calling airline agent (τ-bench, label from expected actions)",
      };
    default:
      return { tuned: false, what: heldOutSources[source] ?? "held-out source" };
  }
}

/** Held-out sources' descriptions, by source name. */
export const heldOutSources: Record<string, string> = {
  "agentrx/tau-retail":
    "retail customer-service agent, τ-bench retail runs (AgentRx, people's labels; 8 of 29 blame the simulated user)",
  "agentrx/magentic-one":
    "Magentic-One web-research team on other runs (AgentRx, people's labels; Who&When's own runs left out)",
  "agenterrorbench/gaia":
    "single GAIA research agent driven by GPT-4o, Llama-3.3-70B and Qwen3-8B (AgentErrorBench, people's labels)",
  "agentprocessbench/hotpotqa":
    "single HotpotQA search agent (AgentProcessBench, people's labels of the first wrong step)",
  "aftraj/travelplanner":
    "multi-agent travel planning team (AFTraj sample, labels by the authors' multi-judge model pipeline)",
  "aftraj/web-code-service":
    "multi-agent web, coding, terminal and service teams (AFTraj sample, labels by a multi-judge model pipeline)",
};

/** The folder of the real logs, or a sentence saying why there is none. */
export function realLogsDir(env: NodeJS.ProcessEnv = process.env): { dir: string } | { absent: string } {
  const dir = env[realLogsSetting];
  if (!dir)
    return {
      absent:
        `${realLogsSetting} is not set: this benchmark runs on public agent failure logs that are not in ` +
        "this repository. Fetch github.com/ag2ai/Agents_Failure_Attribution (its `Who&When` folder) into " +
        "<dir>/who-and-when/ and sierra-research/tau-bench's historical_trajectories/gpt-4o-airline.json " +
        `into <dir>/tau-bench/, then set ${realLogsSetting}=<dir>.`,
    };
  if (!existsSync(dir)) return { absent: `${realLogsSetting}=${dir} does not exist` };
  return { dir };
}

export function splitOf(id: string): "tune" | "holdout" {
  const byte = createHash("sha256").update(id).digest()[0] ?? 0;
  return byte % 3 === 0 ? "holdout" : "tune";
}

export const at = (i: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();

export function base(id: string, description: string, events: TraceEvent[], message: string): TaskCompleted {
  const key = id.replace(/[^A-Za-z0-9_.-]/g, "-");
  return {
    schemaVersion: 1,
    eventId: `real-${key}`,
    tenantId: "real-logs",
    projectId: id.split("/")[0] ?? "real",
    agentId: id.split("/")[0] ?? "real",
    taskId: key,
    loopId: `loop-${key}`,
    occurredAt: at(0),
    task: { description: description.trim().slice(0, 16_000) || "(no description)" },
    outcome: "failure",
    error: { category: "task_failure", message },
    events,
  };
}

interface WhoAndWhenFile {
  history: { content: string | null; role: string; name?: string }[];
  question: string;
  mistake_agent?: string;
  mistake_step?: string | number;
  mistake_reason?: string;
}

/** `Orchestrator (-> WebSurfer)` is the Orchestrator speaking; the name before the bracket is the agent. */
export function whoAndWhenActor(entry: { role: string; name?: string }): string {
  if (entry.name) return entry.name;
  return entry.role.replace(/\s*\(.*\)\s*$/, "").trim() || entry.role;
}

export const terminalActors = new Set(["ComputerTerminal", "Computer_terminal"]);

/** A Who&When-style history as trace events: `events[i]` is `history[i]`. */
export function whoAndWhenEvents(
  history: readonly { content: string | null; role: string; name?: string }[],
): TraceEvent[] {
  return history.map((entry, i) => {
    const actor = whoAndWhenActor(entry);
    const terminal = terminalActors.has(actor);
    return {
      eventId: `step-${String(i)}`,
      type: entry.role === "human" ? "system_event" : terminal ? "tool_response" : "llm_response",
      timestamp: at(i + 1),
      content: entry.content ?? "",
      actor,
      ...(terminal ? { toolName: "code_executor" } : {}),
    };
  });
}

function loadWhoAndWhen(dir: string, subset: "Hand-Crafted" | "Algorithm-Generated"): RealFailure[] {
  const folder = join(dir, "who-and-when", "Who&When", subset);
  if (!existsSync(folder)) return [];
  const source: RealLogSource =
    subset === "Hand-Crafted" ? "who-and-when/hand-crafted" : "who-and-when/algorithm-generated";
  return readdirSync(folder)
    .filter((f) => f.endsWith(".json"))
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
    .map((file) => {
      const raw = JSON.parse(readFileSync(join(folder, file), "utf8")) as WhoAndWhenFile;
      const id = `${source}/${file.replace(/\.json$/, "")}`;
      const events = whoAndWhenEvents(raw.history);
      const step = raw.mistake_step === undefined ? undefined : Number(raw.mistake_step);
      return {
        id,
        source,
        event: base(
          id,
          raw.question,
          events,
          "The team's final answer was judged wrong against the task's reference answer.",
        ),
        label: {
          agent: raw.mistake_agent,
          step: step !== undefined && Number.isInteger(step) ? step : undefined,
          reason: raw.mistake_reason ?? "",
        },
        taskKey: id,
        split: splitOf(id),
      };
    });
}

interface TauToolCall {
  function: { name: string; arguments: string };
}
interface TauMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  name?: string;
  tool_calls?: TauToolCall[] | null;
}
interface TauRun {
  task_id: number;
  reward: number;
  trial: number;
  traj: TauMessage[];
  info: { task: { instruction: string; actions: { name: string; kwargs: Record<string, unknown> }[] } };
}

/** Tools that only read; every other airline tool changes the booking database or hands off. */
const readOnlyTool = /^(get_|search_|list_|calculate|think)/;

export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object")
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(value);
}

/**
 * The task description a τ-bench airline run is given as: the agent's role, then the request. The
 * same words for every task, so that what differs between two tasks is the request alone.
 */
export function tauTaskDescription(request: string): string {
  return `Airline customer service: help the user with their request. The user opened with: ${request}`;
}

function readTauRuns(dir: string): TauRun[] {
  const file = join(dir, "tau-bench", "gpt-4o-airline.json");
  if (!existsSync(file)) return [];
  return JSON.parse(readFileSync(file, "utf8")) as TauRun[];
}

/** One τ-bench airline task, whether or not any of its runs failed. */
export interface TauAirlineTask {
  /** `task-<id>`, as `RealFailure.taskKey`. */
  taskKey: string;
  /**
   * The task as the benchmark's authors describe it to their simulated user (second person: "You
   * want to…"), from `info.task.instruction`; the user's opening requests are worded from it.
   */
  instruction: string;
  /** The simulated user's opening request in each run, in the file's order. */
  openings: { trial: number; request: string }[];
  /** As `RealFailure.split` for the task's failures. */
  split: "tune" | "holdout";
}

/**
 * Every τ-bench airline task under the folder, by task key, including those that never failed
 * (which `loadRealFailures` does not return); empty when the file is absent.
 */
export function loadTauAirlineTasks(dir: string): Map<string, TauAirlineTask> {
  const tasks = new Map<string, TauAirlineTask>();
  for (const run of readTauRuns(dir)) {
    const taskKey = `task-${String(run.task_id)}`;
    const task = tasks.get(taskKey) ?? {
      taskKey,
      instruction: run.info.task.instruction,
      openings: [],
      split: splitOf(`tau-bench/airline/${taskKey}`),
    };
    task.openings.push({
      trial: run.trial,
      request: run.traj.find((m) => m.role === "user")?.content ?? "",
    });
    tasks.set(taskKey, task);
  }
  return tasks;
}

function loadTauAirline(dir: string): RealFailure[] {
  const runs = readTauRuns(dir);
  const source: RealLogSource = "tau-bench/airline";
  return runs
    .filter((run) => run.reward < 1)
    .map((run) => {
      const id = `${source}/task-${String(run.task_id)}/trial-${String(run.trial)}`;
      const expected = new Set(run.info.task.actions.map((a) => `${a.name}${canonical(a.kwargs)}`));
      const events: TraceEvent[] = [];
      let decisive: number | undefined;
      let decisiveWhat = "";
      const unexpectedWrites: number[] = [];
      for (const message of run.traj) {
        const i = events.length;
        if (message.role === "system") {
          events.push({
            eventId: `step-${String(i)}`,
            type: "system_event",
            timestamp: at(i + 1),
            content: message.content ?? "",
            actor: "system",
          });
        } else if (message.role === "user") {
          events.push({
            eventId: `step-${String(i)}`,
            type: "llm_response",
            timestamp: at(i + 1),
            content: message.content ?? "",
            actor: "user",
          });
        } else if (message.role === "tool") {
          events.push({
            eventId: `step-${String(i)}`,
            type: "tool_response",
            timestamp: at(i + 1),
            content: message.content ?? "",
            toolName: message.name ?? "tool",
            actor: "agent",
          });
        } else if (message.tool_calls?.length) {
          for (const call of message.tool_calls) {
            const j = events.length;
            let kwargs: unknown = call.function.arguments;
            try {
              kwargs = JSON.parse(call.function.arguments);
            } catch {
              // Kept as the string the model wrote.
            }
            events.push({
              eventId: `step-${String(j)}`,
              type: "tool_call",
              timestamp: at(j + 1),
              content: JSON.stringify(kwargs),
              toolName: call.function.name,
              actor: "agent",
            });
            const name = call.function.name;
            if (!readOnlyTool.test(name) && !expected.has(`${name}${canonical(kwargs)}`)) {
              unexpectedWrites.push(j);
              if (decisive === undefined) {
                decisive = j;
                decisiveWhat = name;
              }
            }
          }
        } else {
          events.push({
            eventId: `step-${String(i)}`,
            type: "llm_response",
            timestamp: at(i + 1),
            content: message.content ?? "",
            actor: "agent",
          });
        }
      }
      const firstUser = run.traj.find((m) => m.role === "user")?.content ?? "";
      return {
        id,
        source,
        event: base(
          id,
          tauTaskDescription(firstUser),
          events,
          "The final reservation database did not match the expected outcome.",
        ),
        label: {
          agent: decisive === undefined ? undefined : "agent",
          step: decisive,
          reason:
            decisive === undefined
              ? "no write call outside the expected actions (a missing or incomplete action)"
              : `first write call not among the task's expected actions: ${decisiveWhat}`,
          unexpectedWrites,
        },
        taskKey: `task-${String(run.task_id)}`,
        split: splitOf(`${source}/task-${String(run.task_id)}`),
      };
    });
}

/** Every real failure found under the folder, by source; empty sources are left out. */
export function loadRealFailures(dir: string): RealFailure[] {
  return [
    ...loadWhoAndWhen(dir, "Hand-Crafted"),
    ...loadWhoAndWhen(dir, "Algorithm-Generated"),
    ...loadTauAirline(dir),
    ...loadHeldOutSources(dir),
  ];
}

/** Where τ²-bench's airline tasks are read from, under `REFLECTOR_REAL_LOGS_DIR`. */
export const tau2AirlineTasksPath = join("tau2-bench", "airline-tasks.json");

/** One τ²-bench airline task (github.com/sierra-research/tau2-bench, `data/tau2/domains/airline/tasks.json`). */
export interface Tau2AirlineTask {
  /** `tau2-<id>`: the task's `id` in the file, told apart from τ-bench's `task-<id>`. */
  taskKey: string;
  /**
   * Why the simulated user calls, as the benchmark's authors wrote it for them (second person,
   * "You want to…"): `user_scenario.instructions.reason_for_call`.
   */
  reasonForCall: string;
  /** Deterministic, as every other source's; such tasks are never tuned on all the same. */
  split: "tune" | "holdout";
}

interface Tau2TaskFile {
  id: string | number;
  user_scenario?: { instructions?: { reason_for_call?: string | null } | string | null } | null;
}

/**
 * τ²-bench's airline tasks by task key, or a sentence saying where to fetch them when the file is
 * absent (it is optional: only the labels that name such a task need it).
 */
export function loadTau2AirlineTasks(dir: string): Map<string, Tau2AirlineTask> | { absent: string } {
  const file = join(dir, tau2AirlineTasksPath);
  if (!existsSync(file))
    return {
      absent:
        `${file} is absent: fetch data/tau2/domains/airline/tasks.json of ` +
        `github.com/sierra-research/tau2-bench into <dir>/${tau2AirlineTasksPath} to read the labels that name τ²-bench tasks`,
    };
  const tasks = new Map<string, Tau2AirlineTask>();
  for (const raw of JSON.parse(readFileSync(file, "utf8")) as Tau2TaskFile[]) {
    const taskKey = `tau2-${String(raw.id)}`;
    const instructions = raw.user_scenario?.instructions;
    const reason = typeof instructions === "object" ? instructions?.reason_for_call : undefined;
    // A task without one cannot be a query; a label that names it is refused when read.
    if (!reason?.trim()) continue;
    tasks.set(taskKey, {
      taskKey,
      reasonForCall: reason.trim(),
      split: splitOf(`tau2-bench/airline/${taskKey}`),
    });
  }
  return tasks;
}

/** Where the later airline requests are read from, under `REFLECTOR_REAL_LOGS_DIR`. */
export const laterAirlineRequestPaths = {
  fewShot: join("tau-bench", "few-shot-airline.jsonl"),
  revised: join("new-tau-bench", "revised_tasks_test.py"),
};

/**
 * A request an airline agent is about to handle, from a source with no runs of ours: `fewshot-<n>`,
 * the user's opening message of τ-bench's n-th airline few-shot conversation (0-based line);
 * `revised-<id>`, a task instruction as neo-τ-bench rewrote it (its task `id`).
 */
export interface LaterAirlineRequest {
  key: string;
  request: string;
  wording: "opening" | "instruction";
}

/**
 * Both files' requests by key, or a sentence saying where to fetch them when either is absent.
 * Only neo-τ-bench's instructions that differ from τ-bench's own (first 100 characters) are kept:
 * the others are τ-bench's words, read already. `tauInstructions`: τ-bench's instructions.
 */
export function loadLaterAirlineRequests(
  dir: string,
  tauInstructions: readonly string[],
): Map<string, LaterAirlineRequest> | { absent: string } {
  const fewShot = join(dir, laterAirlineRequestPaths.fewShot);
  const revised = join(dir, laterAirlineRequestPaths.revised);
  if (!existsSync(fewShot) || !existsSync(revised))
    return {
      absent:
        `${!existsSync(fewShot) ? fewShot : revised} is absent: fetch few_shot_data/MockAirlineDomainEnv-few_shot.jsonl ` +
        `of github.com/sierra-research/tau-bench into <dir>/${laterAirlineRequestPaths.fewShot} and ` +
        `tau_bench/envs/airline/revised_tasks_test.py of github.com/yiphei/new-tau-bench into ` +
        `<dir>/${laterAirlineRequestPaths.revised} to read the labels of the set fresh-4`,
    };
  const out = new Map<string, LaterAirlineRequest>();
  readFileSync(fewShot, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .forEach((line, n) => {
      const display = (JSON.parse(line) as { messages_display: string }).messages_display;
      const first = display.split("\nassistant:")[0] ?? "";
      if (!first.startsWith("user: "))
        throw new Error(`${fewShot} line ${String(n + 1)}: no opening user message`);
      out.set(`fewshot-${String(n)}`, {
        key: `fewshot-${String(n)}`,
        request: first.slice(6).trim(),
        wording: "opening",
      });
    });
  const known = new Set(tauInstructions.map((i) => i.slice(0, 100)));
  // Each task is `Task(id=<n>, …, instruction=<text>, …)`, the text one string literal or several
  // in parentheses (Python joins adjacent literals).
  const source = readFileSync(revised, "utf8");
  for (const block of source.split("Task(").slice(1)) {
    const id = /^\s*id=(\d+),/.exec(block)?.[1];
    const at = block.indexOf("instruction=");
    if (id === undefined || at < 0) throw new Error(`${revised}: a task without an id or an instruction`);
    const text = pythonStrings(block, at + "instruction=".length);
    if (text === null) throw new Error(`${revised}: task ${id}'s instruction is not string literals`);
    if (known.has(text.slice(0, 100))) continue;
    out.set(`revised-${id}`, { key: `revised-${id}`, request: text, wording: "instruction" });
  }
  return out;
}

/**
 * The text of double-quoted Python string literals from `at`: one, or several in parentheses,
 * joined; null when something else is there. Escapes are JSON's, plus `\'`.
 */
function pythonStrings(text: string, at: number): string | null {
  let i = at;
  const skip = () => {
    while (i < text.length && /\s/.test(text[i] ?? "")) i += 1;
  };
  skip();
  const grouped = text[i] === "(";
  if (grouped) i += 1;
  const parts: string[] = [];
  for (;;) {
    skip();
    if (text[i] !== '"') break;
    let j = i + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
    if (j >= text.length) return null;
    parts.push(JSON.parse(text.slice(i, j + 1).replace(/\\'/g, "'")) as string);
    i = j + 1;
    if (!grouped) break;
  }
  if (parts.length === 0 || (grouped && text[i] !== ")")) return null;
  return parts.join("");
}
