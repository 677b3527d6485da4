import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { partsAt, queriesOf, tuneFloor, type Labels, type Query } from "../../../bench/lessons-for-task.js";
import {
  loadRealFailures,
  loadTauAirlineTasks,
  splitOf,
  tauTaskDescription,
} from "../../../bench/real-logs/real-logs.js";

/** A made-up τ-bench airline file: task 0 failed in trial 1, task 5 in trial 0, task 12 never. */
function tauRun(taskId: number, trial: number, reward: number) {
  return {
    task_id: taskId,
    trial,
    reward,
    traj: [
      { role: "system", content: "policy" },
      { role: "user", content: `opening of task ${String(taskId)} trial ${String(trial)}` },
      { role: "assistant", content: "how can I help" },
    ],
    info: { task: { instruction: `You are the user of task ${String(taskId)}.`, actions: [] } },
  };
}

const dir = mkdtempSync(join(tmpdir(), "lessons-for-task-"));
mkdirSync(join(dir, "tau-bench"));
writeFileSync(
  join(dir, "tau-bench", "gpt-4o-airline.json"),
  JSON.stringify([tauRun(0, 0, 1), tauRun(0, 1, 0), tauRun(5, 0, 0), tauRun(12, 0, 1), tauRun(12, 1, 1)]),
);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const lessons = { L0: { recording: "tau-bench/airline/task-9/trial-0", topic: "t" } };

describe("every τ-bench airline task, failed or not", () => {
  it("reads each task's instruction and every run's opening request, in the file's order", () => {
    const tasks = loadTauAirlineTasks(dir);
    expect([...tasks.keys()]).toEqual(["task-0", "task-5", "task-12"]);
    expect(tasks.get("task-12")).toEqual({
      taskKey: "task-12",
      instruction: "You are the user of task 12.",
      openings: [
        { trial: 0, request: "opening of task 12 trial 0" },
        { trial: 1, request: "opening of task 12 trial 1" },
      ],
      split: splitOf("tau-bench/airline/task-12"),
    });
    expect(loadTauAirlineTasks(join(dir, "absent")).size).toBe(0);
  });

  it("leaves the failures as they were: failed runs only, described in the same words", () => {
    const failures = loadRealFailures(dir);
    expect(failures.map((f) => f.id)).toEqual([
      "tau-bench/airline/task-0/trial-1",
      "tau-bench/airline/task-5/trial-0",
    ]);
    expect(failures[0]?.event.task.description).toBe(tauTaskDescription("opening of task 0 trial 1"));
  });
});

describe("queries of the labels", () => {
  const failures = loadRealFailures(dir);
  const tasks = loadTauAirlineTasks(dir);
  const labels: Labels = {
    lessons,
    related: [
      { task: "task-0", lessons: ["L0"], reason: "r" },
      { task: "task-0", lessons: ["L0"], reason: "r", set: "fresh-2", wording: "instruction" },
      { task: "task-12", lessons: ["L0"], reason: "r", set: "fresh-2" },
    ],
    unrelated: [
      { source: "tau-bench/airline", task: "task-5", fresh: true },
      { source: "tau-bench/airline", task: "task-12", set: "fresh-2", wording: "instruction" },
    ],
  };

  it("words a query as its label says, names each once, and keeps its set", () => {
    const queries = queriesOf(labels, failures, tasks);
    expect(queries.map((q) => [q.name, q.set, q.wording, q.kind])).toEqual([
      ["tau-bench/airline/task-0/trial-1", "first", "opening", "related"],
      ["tau-bench/airline/task-0/instruction", "fresh-2", "instruction", "related"],
      ["tau-bench/airline/task-12/trial-0", "fresh-2", "opening", "related"],
      ["tau-bench/airline/task-5/trial-0", "fresh", "opening", "unrelated-same-domain"],
      ["tau-bench/airline/task-12/instruction", "fresh-2", "instruction", "unrelated-same-domain"],
    ]);
    expect(queries.map((q) => q.text)).toEqual([
      tauTaskDescription("opening of task 0 trial 1"),
      tauTaskDescription("You are the user of task 0."),
      tauTaskDescription("opening of task 12 trial 0"),
      tauTaskDescription("opening of task 5 trial 0"),
      tauTaskDescription("You are the user of task 12."),
    ]);
    expect(queries[2]?.split).toBe(splitOf("tau-bench/airline/task-12"));
  });

  it("refuses two labels that make the same query, an instruction of a non-τ-bench task, and unknown tasks", () => {
    const twice = { ...labels, related: [...labels.related, { task: "task-12", lessons: [], reason: "r" }] };
    expect(() => queriesOf(twice, failures, tasks)).toThrow(
      /same query tau-bench\/airline\/task-12\/trial-0/,
    );
    const who: Labels = {
      lessons,
      related: [],
      unrelated: [{ source: "who-and-when", id: "who-and-when/hand-crafted/1", wording: "instruction" }],
    };
    expect(() => queriesOf(who, failures, tasks)).toThrow(/instruction/);
    const unknown: Labels = {
      lessons,
      related: [{ task: "task-77", lessons: [], reason: "r", wording: "instruction" }],
      unrelated: [],
    };
    expect(() => queriesOf(unknown, failures, tasks)).toThrow(/task-77/);
  });
});

describe("fresh-2 in the sweep and the report", () => {
  const query = (name: string, over: Partial<Query>): Query => ({
    name,
    split: "tune",
    text: name,
    right: [],
    kind: "unrelated-same-domain",
    set: "first",
    wording: "opening",
    ...over,
  });
  const first = [query("related", { kind: "related", right: ["L0"] }), query("unrelated", {})];
  const firstGot = [[{ key: "L0", relevance: 0.5 }], [{ key: "L0", relevance: 0.2 }]];
  const fresh2 = [
    query("fresh-2 unrelated", { set: "fresh-2" }),
    query("fresh-2 related", { set: "fresh-2", wording: "instruction", kind: "related", right: ["L0"] }),
  ];
  const fresh2Got = [[{ key: "L0", relevance: 0.6 }], [{ key: "L0", relevance: 0.1 }]];

  it("never lets fresh-2 choose the floor", () => {
    const alone = tuneFloor(first, firstGot);
    expect(alone).toMatchObject({ low: 0.21, high: 0.5, worst: 1 });
    expect(tuneFloor([...first, ...fresh2], [...firstGot, ...fresh2Got])).toEqual(alone);
  });

  it("reports fresh-2 on lines of its own, by wording, and keeps it out of all", () => {
    const { lines, all } = partsAt(0.3, [...first, ...fresh2], [...firstGot, ...fresh2Got]);
    const line = (part: string) => lines.find((l) => l.startsWith(`${part.padEnd(7)} at floor`)) ?? "";
    expect(all).toEqual({ hit: 1, clean: 1 });
    expect(line("all")).toContain("100.0 % of 1 related; nothing above the floor 100.0 % of 1 unrelated");
    expect(line("fresh-2")).toContain("0.0 % of 1 related; nothing above the floor 0.0 % of 1 unrelated");
    expect(line("fresh-2 opening")).toContain("- of 0 related; nothing above the floor 0.0 % of 1 unrelated");
    expect(line("fresh-2 instruction")).toContain("0.0 % of 1 related; nothing above the floor - of 0");
    expect(line("all with fresh-2")).toContain("50.0 % of 2 related");
    expect(partsAt(0.3, first, firstGot).lines).toContain("fresh-2 at floor 0.300: no queries labelled");
  });
});
