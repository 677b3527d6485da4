/**
 * Public annotated failure logs that nothing in Reflector was tuned on, read from
 * `REFLECTOR_REAL_LOGS_DIR` like the others (never committed):
 * - `agentrx/`: the `data/` folder of github.com/microsoft/AgentRx ("AgentRx: Diagnosing AI Agent
 *   Failures from Execution Trajectories", arXiv:2602.02475; MIT). People annotated every failure
 *   of each failed run (step, category, agent) and named the root cause.
 *   - `data/tau_retail/tau_dataset_failed.json` + `data/ground_truth/tau_ground_truth.json`: 29
 *     failed τ-bench retail runs of a tool-calling customer-service agent. `step_number` is 1-based
 *     over the run's messages, the system message included.
 *   - `data/magentic_dataset/*.json` + `data/ground_truth/magentic_one_ground_truth.json`: 44
 *     failed Magentic-One runs (GAIA, AssistantBench). `step_number` is 1-based over the list. Runs
 *     that are Who&When's own (the same messages) are left out: those were tuned on.
 * - `agentprocessbench/hotpotqa.jsonl`: AgentProcessBench's HotpotQA runs of a search agent
 *   (github.com/RUCBM/AgentProcessBench, arXiv:2603.14465): people labelled every agent turn +1, 0
 *   or -1; a failed run (`final_label` -1) is labelled at its first -1 turn — the first error,
 *   which the authors' guide allows to be later corrected, not always the decisive one.
 * - `aftraj-sample100/sample100_by_benchmark/<benchmark>/*.json`: a 100-run sample of AFTraj
 *   (github.com/zhangshixuan323-afk/AgentForesight, arXiv:2605.08715; MIT): multi-agent runs on
 *   TravelPlanner, WebArena, SWE-bench Pro, VitaBench and Terminal-Bench, each labelled with the
 *   decisive step and agent by the authors' multi-judge pipeline of models — read by models, not
 *   by people. TravelPlanner's agents are named by role as the authors score them.
 * - `agenterrorbench/`: the GAIA part of AgentErrorBench (Zhu et al. 2025, "Where LLM Agents Fail
 *   and How They Can Learn From Failures", arXiv:2509.25370; released with github.com/ulab-uiuc/
 *   AgentDebug, read from the copy in github.com/mel-hsw/agent-failure-attribution,
 *   `data/AgentErrorBench/`): `gaia_labels.json` and `GAIA/<id>.json`, one research agent driven by
 *   three models. `critical_failure_step` is 1-based over the agent's own turns.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { TraceEvent } from "../../src/domain/contracts/index.js";
import { at, base, splitOf, terminalActors, whoAndWhenEvents, type RealFailure } from "./real-logs.js";

interface AgentRxLabel {
  trajectory_id: string | number;
  failures: { failure_id: string | number; step_number: number; failed_agent: string; step_reason: string }[];
  root_cause: { failure_id: string | number; reason_for_root_cause?: string };
}

function rootCause(label: AgentRxLabel): { step: number; agent: string; reason: string } | undefined {
  const root = label.failures.find((f) => String(f.failure_id) === String(label.root_cause.failure_id));
  return root ? { step: root.step_number, agent: root.failed_agent, reason: root.step_reason } : undefined;
}

interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | null;
  name?: string;
  tool_calls?: { function: { name: string; arguments: string } }[] | null;
}

/** A τ-bench run's messages as trace events; `firstEventOf[m]` is the event of message m. */
export function chatEvents(messages: readonly ChatMessage[]): {
  events: TraceEvent[];
  firstEventOf: number[];
} {
  const events: TraceEvent[] = [];
  const firstEventOf: number[] = [];
  const push = (e: Omit<TraceEvent, "eventId" | "timestamp">) =>
    events.push({ eventId: `step-${String(events.length)}`, timestamp: at(events.length + 1), ...e });
  for (const m of messages) {
    firstEventOf.push(events.length);
    const content = m.content ?? "";
    if (m.role === "system") push({ type: "system_event", content, actor: "system" });
    else if (m.role === "user") push({ type: "llm_response", content, actor: "user" });
    else if (m.role === "tool")
      push({ type: "tool_response", content, toolName: m.name ?? "tool", actor: "assistant" });
    else if (m.tool_calls?.length) {
      if (content.trim()) push({ type: "llm_response", content, actor: "assistant" });
      for (const call of m.tool_calls)
        push({
          type: "tool_call",
          content: call.function.arguments,
          toolName: call.function.name,
          actor: "assistant",
        });
    } else push({ type: "llm_response", content, actor: "assistant" });
  }
  return { events, firstEventOf };
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the file's shape
const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, "utf8")) as T;

function loadAgentRxRetail(dir: string): RealFailure[] {
  const runsFile = join(dir, "agentrx", "data", "tau_retail", "tau_dataset_failed.json");
  const labelsFile = join(dir, "agentrx", "data", "ground_truth", "tau_ground_truth.json");
  if (!existsSync(runsFile) || !existsSync(labelsFile)) return [];
  const labels = new Map(readJson<AgentRxLabel[]>(labelsFile).map((l) => [String(l.trajectory_id), l]));
  const source = "agentrx/tau-retail" as const;
  return readJson<{ task_id: number; traj: ChatMessage[] }[]>(runsFile).flatMap((run) => {
    const label = labels.get(String(run.task_id));
    const root = label ? rootCause(label) : undefined;
    if (!root) return [];
    const id = `${source}/task-${String(run.task_id)}`;
    const { events, firstEventOf } = chatEvents(run.traj);
    const opening = run.traj.find((m) => m.role === "user")?.content ?? "";
    return [
      {
        id,
        source,
        event: base(
          id,
          `Retail customer service: help the user with their request. The user opened with: ${opening}`,
          events,
          "The final order database did not match the expected outcome.",
        ),
        label: {
          agent: root.agent.toLowerCase() === "user" ? "user" : "assistant",
          step: firstEventOf[root.step - 1],
          reason: root.reason,
        },
        taskKey: `task-${String(run.task_id)}`,
        split: splitOf(id),
      },
    ];
  });
}

/** Who&When's hand-crafted runs, by their first message and length, to leave them out here. */
function whoAndWhenRuns(dir: string): Set<string> {
  const folder = join(dir, "who-and-when", "Who&When", "Hand-Crafted");
  if (!existsSync(folder)) return new Set();
  return new Set(
    readdirSync(folder)
      .filter((f) => f.endsWith(".json"))
      .map((f) => {
        const h = readJson<{ history: { content: string | null }[] }>(join(folder, f)).history;
        return `${String(h.length)}\u0000${h[1]?.content ?? ""}`;
      }),
  );
}

function loadAgentRxMagentic(dir: string): RealFailure[] {
  const folder = join(dir, "agentrx", "data", "magentic_dataset");
  const labelsFile = join(dir, "agentrx", "data", "ground_truth", "magentic_one_ground_truth.json");
  if (!existsSync(folder) || !existsSync(labelsFile)) return [];
  const tuned = whoAndWhenRuns(dir);
  const source = "agentrx/magentic-one" as const;
  return readJson<AgentRxLabel[]>(labelsFile).flatMap((label) => {
    const file = join(folder, `${String(label.trajectory_id)}.json`);
    const root = rootCause(label);
    if (!root || !existsSync(file)) return [];
    const history = readJson<{ content: string | null; role: string }[]>(file);
    if (tuned.has(`${String(history.length)}\u0000${history[1]?.content ?? ""}`)) return [];
    const id = `${source}/${String(label.trajectory_id)}`;
    const events = whoAndWhenEvents(history);
    return [
      {
        id,
        source,
        event: base(
          id,
          history[0]?.content ?? "",
          events,
          "The team's final answer was judged wrong against the task's reference answer.",
        ),
        label: { agent: root.agent, step: root.step - 1, reason: root.reason },
        taskKey: id,
        split: splitOf(id),
      },
    ];
  });
}

interface ErrorBenchLabel {
  trajectory_id: string;
  critical_failure_step: number;
  critical_failure_module: string;
  step_annotations?: Record<string, unknown>[];
}

/** The observation part of a repeated prompt: what the tool returned, without the instructions. */
function observationOf(prompt: string): string {
  const at = prompt.indexOf("Current Observation:");
  if (at < 0) return prompt.slice(0, 4000);
  const rest = prompt.slice(at);
  const end = ["\nInstructions:", "\nGiven from the analysis", "\nNow it's your turn"]
    .map((marker) => rest.indexOf(marker))
    .filter((i) => i > 0);
  return rest.slice(0, end.length ? Math.min(...end) : rest.length).trim();
}

function loadAgentErrorBenchGaia(dir: string): RealFailure[] {
  const folder = join(dir, "agenterrorbench-gaia", "GAIA");
  const labelsFile = join(dir, "agenterrorbench-gaia", "gaia_labels.json");
  if (!existsSync(folder) || !existsSync(labelsFile)) return [];
  const source = "agenterrorbench/gaia" as const;
  return readJson<ErrorBenchLabel[]>(labelsFile).flatMap((label) => {
    const file = join(folder, `${label.trajectory_id}.json`);
    if (!existsSync(file)) return [];
    const run = readJson<{ messages: { role: string; content: string }[] }>(file);
    const events: TraceEvent[] = [];
    const agentTurns: number[] = [];
    let tool = "environment";
    run.messages.forEach((m, i) => {
      const index = events.length;
      if (m.role === "assistant") {
        agentTurns.push(index);
        tool = /<action>\s*(?:tool|action):\s*([\w.-]+)/.exec(m.content)?.[1] ?? tool;
        events.push({
          eventId: `step-${String(index)}`,
          type: "llm_response",
          timestamp: at(index + 1),
          content: m.content,
          actor: "agent",
        });
      } else if (i === 0) {
        events.push({
          eventId: `step-${String(index)}`,
          type: "system_event",
          timestamp: at(index + 1),
          content: m.content,
          actor: "user",
        });
      } else {
        events.push({
          eventId: `step-${String(index)}`,
          type: "tool_response",
          timestamp: at(index + 1),
          content: observationOf(m.content),
          toolName: tool,
          actor: "environment",
        });
      }
    });
    const step = agentTurns[label.critical_failure_step - 1];
    // A label past the run's own turns cannot be scored (one such in the set).
    if (step === undefined) return [];
    const question = /Task:\s*([\s\S]*?)\n\s*\n/.exec(run.messages[0]?.content ?? "")?.[1] ?? "";
    const id = `${source}/${label.trajectory_id}`;
    return [
      {
        id,
        source,
        event: base(
          id,
          question,
          events,
          "The agent's final answer was judged wrong against the task's reference answer.",
        ),
        label: {
          agent: "agent",
          step,
          reason: `critical failure in the agent's ${label.critical_failure_module} module`,
        },
        taskKey: id,
        split: splitOf(id),
      },
    ];
  });
}

interface ProcessBenchRun {
  total_index: number;
  question: string;
  messages: ChatMessage[];
  step_labels: Record<string, number>;
  final_label: number;
}

function loadAgentProcessBench(dir: string): RealFailure[] {
  const file = join(dir, "agentprocessbench", "hotpotqa.jsonl");
  if (!existsSync(file)) return [];
  const source = "agentprocessbench/hotpotqa" as const;
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as ProcessBenchRun)
    .filter((run) => run.final_label === -1)
    .flatMap((run) => {
      const firstError = Object.keys(run.step_labels)
        .map(Number)
        .sort((a, b) => a - b)
        .find((k) => run.step_labels[String(k)] === -1);
      if (firstError === undefined) return [];
      const { events, firstEventOf } = chatEvents(run.messages);
      const id = `${source}/${String(run.total_index)}`;
      return [
        {
          id,
          source,
          event: base(
            id,
            run.question,
            events,
            "The agent's final answer was judged wrong against the task's reference answer.",
          ),
          label: {
            agent: "assistant",
            step: firstEventOf[firstError],
            reason: "the first step people marked -1",
          },
          taskKey: id,
          split: splitOf(id),
        },
      ];
    });
}

/** TravelPlanner's agents by the role the AFTraj authors score them under. */
const travelPlannerRoles: Record<string, string> = {
  transport_agent: "Action_Expert",
  stay_agent: "Action_Expert",
  food_attr_agent: "Action_Expert",
  manager_agent: "Task_Planner",
  verifier_agent: "Verification_Expert",
};

interface AfTrajRun {
  history: { content: string | null; role: string; name?: string }[];
  mistake_agent: string;
  mistake_step: number | string;
  mistake_reason: string;
}

function loadAfTraj(dir: string): RealFailure[] {
  const root = join(dir, "aftraj-sample100", "sample100_by_benchmark");
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .flatMap((benchmark) =>
      readdirSync(join(root, benchmark))
        .filter((f) => f.endsWith(".json"))
        .sort()
        .map((file) => {
          const run = JSON.parse(readFileSync(join(root, benchmark, file), "latin1")) as AfTrajRun;
          const source = benchmark === "travelplanner" ? "aftraj/travelplanner" : "aftraj/web-code-service";
          const id = `${source}/${file.replace(/\.json$/, "")}`;
          const events: TraceEvent[] = run.history.map((entry, i) => {
            const named = (entry.name ?? entry.role).replace(/\s*\(.*\)\s*$/, "").trim();
            const actor = benchmark === "travelplanner" ? (travelPlannerRoles[named] ?? named) : named;
            const terminal = terminalActors.has(actor);
            return {
              eventId: `step-${String(i)}`,
              type: actor === "human" ? "system_event" : terminal ? "tool_response" : "llm_response",
              timestamp: at(i + 1),
              content: entry.content ?? "",
              actor,
              ...(terminal ? { toolName: "environment" } : {}),
            };
          });
          const agent = run.mistake_agent.replace(/\s*\(.*\)\s*$/, "").trim();
          return {
            id,
            source,
            event: base(
              id,
              run.history[0]?.content ?? "",
              events,
              "The team's result was judged wrong by the benchmark.",
            ),
            // The environment blamed: no agent to name (the authors leave these out of agent scores).
            label: {
              agent: terminalActors.has(agent) ? undefined : agent,
              step: Number(run.mistake_step),
              reason: run.mistake_reason.slice(0, 400),
            },
            taskKey: id,
            split: splitOf(id),
          } satisfies RealFailure;
        }),
    );
}

/** Every held-out source found under the folder. */
export function loadHeldOutSources(dir: string): RealFailure[] {
  return [
    ...loadAgentRxRetail(dir),
    ...loadAgentRxMagentic(dir),
    ...loadAgentErrorBenchGaia(dir),
    ...loadAgentProcessBench(dir),
    ...loadAfTraj(dir),
  ];
}
