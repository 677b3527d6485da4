import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  labelledQueries,
  partsAt,
  queriesOf,
  tuneFloor,
  withoutTau2,
  type Labels,
  type Query,
} from "../../../bench/lessons-for-task.js";
import {
  loadLaterAirlineRequests,
  loadRealFailures,
  loadTau2AirlineTasks,
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
/** The same folder with a made-up τ²-bench airline tasks file (task 3 has no reason for call). */
const withTau2 = mkdtempSync(join(tmpdir(), "lessons-for-task-tau2-"));
mkdirSync(join(withTau2, "tau-bench"));
mkdirSync(join(withTau2, "tau2-bench"));
writeFileSync(
  join(withTau2, "tau-bench", "gpt-4o-airline.json"),
  JSON.stringify([tauRun(0, 0, 1), tauRun(0, 1, 0), tauRun(5, 0, 0), tauRun(12, 0, 1), tauRun(12, 1, 1)]),
);
const tau2Task = (id: string, reason: string | null) => ({
  id,
  description: { purpose: "p" },
  user_scenario: {
    persona: null,
    instructions: { reason_for_call: reason, known_info: "k", domain: "airline" },
  },
});
writeFileSync(
  join(withTau2, "tau2-bench", "airline-tasks.json"),
  JSON.stringify([
    tau2Task("0", " You want reason 0. "),
    tau2Task("3", null),
    tau2Task("7", "You want reason 7."),
  ]),
);
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(withTau2, { recursive: true, force: true });
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

/** A query of the report's tests: unrelated, tune, first set, opening wording unless told. */
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

describe("fresh-2 in the sweep and the report", () => {
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

describe("τ²-bench airline tasks (fresh-3)", () => {
  it("reads each task's reason for call by tau2-<id>, and says where to fetch an absent file", () => {
    const tasks = loadTau2AirlineTasks(withTau2);
    if ("absent" in tasks) throw new Error(tasks.absent);
    expect([...tasks.keys()]).toEqual(["tau2-0", "tau2-7"]);
    expect(tasks.get("tau2-0")).toEqual({
      taskKey: "tau2-0",
      reasonForCall: "You want reason 0.",
      split: splitOf("tau2-bench/airline/tau2-0"),
    });
    const absent = loadTau2AirlineTasks(dir);
    expect(absent).toHaveProperty("absent");
    const why = "absent" in absent ? absent.absent : "";
    expect(why).toContain("github.com/sierra-research/tau2-bench");
    expect(why).toContain("data/tau2/domains/airline/tasks.json");
    expect(why).toContain(join("tau2-bench", "airline-tasks.json"));
  });

  const labels: Labels = {
    lessons,
    related: [
      { task: "task-0", lessons: ["L0"], reason: "r" },
      { task: "tau2-0", lessons: ["L0"], reason: "r", set: "fresh-3" },
    ],
    unrelated: [
      { source: "tau2-bench/airline", task: "tau2-7", set: "fresh-3" },
      { source: "tau-bench/airline", task: "task-5", set: "fresh-2" },
    ],
  };

  it("words a τ²-bench task by its reason for call, as the request, in the set fresh-3", () => {
    const tau2 = loadTau2AirlineTasks(withTau2);
    if ("absent" in tau2) throw new Error(tau2.absent);
    const queries = queriesOf(labels, loadRealFailures(withTau2), loadTauAirlineTasks(withTau2), tau2);
    expect(queries.map((q) => [q.name, q.set, q.wording, q.kind, q.text])).toEqual([
      [
        "tau-bench/airline/task-0/trial-1",
        "first",
        "opening",
        "related",
        tauTaskDescription("opening of task 0 trial 1"),
      ],
      [
        "tau2-bench/airline/tau2-0/reason",
        "fresh-3",
        "reason",
        "related",
        tauTaskDescription("You want reason 0."),
      ],
      [
        "tau2-bench/airline/tau2-7/reason",
        "fresh-3",
        "reason",
        "unrelated-same-domain",
        tauTaskDescription("You want reason 7."),
      ],
      [
        "tau-bench/airline/task-5/trial-0",
        "fresh-2",
        "opening",
        "unrelated-same-domain",
        tauTaskDescription("opening of task 5 trial 0"),
      ],
    ]);
    expect(queries[1]?.split).toBe(splitOf("tau2-bench/airline/tau2-0"));
  });

  it("refuses a τ²-bench task outside fresh-3, worded otherwise, unknown or without a reason, and a reason for a τ-bench task", () => {
    const tau2 = loadTau2AirlineTasks(withTau2);
    if ("absent" in tau2) throw new Error(tau2.absent);
    const failures = loadRealFailures(withTau2);
    const tasks = loadTauAirlineTasks(withTau2);
    const one =
      (related: Labels["related"], unrelated: Labels["unrelated"] = []) =>
      () =>
        queriesOf({ lessons, related, unrelated }, failures, tasks, tau2);
    expect(one([{ task: "tau2-0", lessons: [], reason: "r", set: "fresh-2" }])).toThrow(/fresh-3/);
    expect(one([{ task: "tau2-0", lessons: [], reason: "r" }])).toThrow(/fresh-3/);
    expect(
      one([{ task: "tau2-0", lessons: [], reason: "r", set: "fresh-3", wording: "instruction" }]),
    ).toThrow(/reason only/);
    expect(one([{ task: "tau2-9", lessons: [], reason: "r", set: "fresh-3" }])).toThrow(/tau2-9/);
    expect(one([{ task: "tau2-3", lessons: [], reason: "r", set: "fresh-3" }])).toThrow(/tau2-3/);
    expect(one([{ task: "task-0", lessons: [], reason: "r", wording: "reason" }])).toThrow(/reason for call/);
    expect(one([], [{ source: "tau2-bench/airline", task: "task-5", set: "fresh-3" }])).toThrow(/tau2-<id>/);
    // Without the file, a label that names a τ²-bench task is refused too (leave it out first).
    expect(() => queriesOf(labels, failures, tasks)).toThrow(/tau2-0/);
  });

  it("leaves fresh-3 labels out with a note when the file is absent, and reads them when it is there", () => {
    const absent = labelledQueries(labels, loadRealFailures(dir), dir);
    expect(absent.queries.map((q) => q.name)).toEqual([
      "tau-bench/airline/task-0/trial-1",
      "tau-bench/airline/task-5/trial-0",
    ]);
    expect(absent.note).toMatch(/^2 labels of τ²-bench tasks \(fresh-3\) not read: .*tau2-bench/);
    expect(withoutTau2(labels).skipped).toBe(2);
    const present = labelledQueries(labels, loadRealFailures(withTau2), withTau2);
    expect(present.note).toBeNull();
    expect(present.queries.filter((q) => q.set === "fresh-3")).toHaveLength(2);
    const none = labelledQueries({ ...labels, related: [], unrelated: [] }, loadRealFailures(dir), dir);
    expect(none).toEqual({ queries: [], note: null });
  });
});

describe("fresh-3 in the sweep and the report", () => {
  const first = [query("related", { kind: "related", right: ["L0"] }), query("unrelated", {})];
  const firstGot = [[{ key: "L0", relevance: 0.5 }], [{ key: "L0", relevance: 0.2 }]];
  const fresh2 = [query("fresh-2 related", { set: "fresh-2", kind: "related", right: ["L0"] })];
  const fresh2Got = [[{ key: "L0", relevance: 0.1 }]];
  const fresh3 = [
    query("fresh-3 related", { set: "fresh-3", wording: "reason", kind: "related", right: ["L0"] }),
    query("fresh-3 unrelated", { set: "fresh-3", wording: "reason", split: "holdout" }),
  ];
  const fresh3Got = [[{ key: "L0", relevance: 0.9 }], [{ key: "L0", relevance: 0.25 }]];
  const queries = [...first, ...fresh2, ...fresh3];
  const got = [...firstGot, ...fresh2Got, ...fresh3Got];

  it("never lets fresh-3 choose the floor", () => {
    expect(tuneFloor(queries, got)).toEqual(tuneFloor(first, firstGot));
  });

  it("reports fresh-3 on a line of its own, out of tune, holdout, all and all with fresh-2", () => {
    const { lines, all } = partsAt(0.3, queries, got);
    const line = (part: string) => lines.find((l) => l.startsWith(`${part.padEnd(7)} at floor`)) ?? "";
    expect(all).toEqual({ hit: 1, clean: 1 });
    expect(line("tune")).toContain("100.0 % of 1 related; nothing above the floor 100.0 % of 1 unrelated");
    expect(line("holdout")).toBe("holdout at floor 0.300: no queries labelled");
    expect(line("all with fresh-2")).toContain(
      "50.0 % of 2 related; nothing above the floor 100.0 % of 1 unrelated",
    );
    expect(line("fresh-3")).toContain("100.0 % of 1 related; nothing above the floor 100.0 % of 1 unrelated");
    expect(line("all with fresh-2 and fresh-3")).toContain(
      "66.7 % of 3 related; nothing above the floor 100.0 % of 2 unrelated",
    );
    const dirty = partsAt(0.2, queries, got).lines.find((l) => l.startsWith("fresh-3 at floor")) ?? "";
    expect(dirty).toContain("nothing above the floor 0.0 % of 1 unrelated");
    expect(partsAt(0.3, first, firstGot).lines).toContain("fresh-3 at floor 0.300: no queries labelled");
  });
});

describe("later airline requests (fresh-4)", () => {
  const later = mkdtempSync(join(tmpdir(), "lessons-for-task-later-"));
  mkdirSync(join(later, "tau-bench"));
  mkdirSync(join(later, "new-tau-bench"));
  writeFileSync(
    join(later, "tau-bench", "gpt-4o-airline.json"),
    JSON.stringify([tauRun(0, 0, 1), tauRun(0, 1, 0), tauRun(5, 0, 0)]),
  );
  writeFileSync(
    join(later, "tau-bench", "few-shot-airline.jsonl"),
    [
      { messages_display: "user: Hi, I need to cancel my flight.\nassistant: Sure.\nuser: thanks" },
      { messages_display: "user: My flight was delayed.\nassistant: Sorry to hear that." },
    ]
      .map((l) => JSON.stringify(l))
      .join("\n") + "\n",
  );
  writeFileSync(
    join(later, "new-tau-bench", "revised_tasks_test.py"),
    [
      "from tau_bench.types import Action, Task",
      "TASKS = [",
      "    Task(",
      "        id=0,",
      '        user_id="u0",',
      '        instruction="You are the user of task 0.",',
      "    ),",
      "    Task(",
      "        id=7,",
      '        user_id="u7",',
      "        instruction=(",
      '            "You want to change your flight. "',
      '            "You say \\"please\\" and you don\\\'t give up."',
      "        ),",
      "    ),",
      "]",
    ].join("\n"),
  );
  afterAll(() => {
    rmSync(later, { recursive: true, force: true });
  });

  it("reads the few-shot openings by line and the rewritten instructions by id, leaving out τ-bench's own", () => {
    const tasks = loadTauAirlineTasks(later);
    const requests = loadLaterAirlineRequests(
      later,
      [...tasks.values()].map((t) => t.instruction),
    );
    if ("absent" in requests) throw new Error(requests.absent);
    expect([...requests.values()]).toEqual([
      { key: "fewshot-0", request: "Hi, I need to cancel my flight.", wording: "opening" },
      { key: "fewshot-1", request: "My flight was delayed.", wording: "opening" },
      {
        key: "revised-7",
        request: 'You want to change your flight. You say "please" and you don\'t give up.',
        wording: "instruction",
      },
    ]);
    const absent = loadLaterAirlineRequests(dir, []);
    expect("absent" in absent && absent.absent).toMatch(
      /few-shot-airline\.jsonl is absent: fetch .*new-tau-bench/,
    );
  });

  const laterLabels: Labels = {
    lessons: { L0: { recording: "tau-bench/airline/task-0/trial-1", topic: "t" } },
    related: [{ task: "fewshot-0", lessons: ["L0"], reason: "r", set: "fresh-4" }],
    unrelated: [{ source: "new-tau-bench/airline", task: "revised-7", set: "fresh-4" }],
  };

  it("words a later request as its source does, in the set fresh-4, and leaves them out with a note when absent", () => {
    const present = labelledQueries(laterLabels, loadRealFailures(later), later);
    expect(present.note).toBeNull();
    expect(present.queries.map((q) => [q.name, q.set, q.wording, q.kind, q.text])).toEqual([
      [
        "later-airline/fewshot-0",
        "fresh-4",
        "opening",
        "related",
        tauTaskDescription("Hi, I need to cancel my flight."),
      ],
      [
        "later-airline/revised-7",
        "fresh-4",
        "instruction",
        "unrelated-same-domain",
        tauTaskDescription('You want to change your flight. You say "please" and you don\'t give up.'),
      ],
    ]);
    const absent = labelledQueries(laterLabels, loadRealFailures(dir), dir);
    expect(absent.queries).toEqual([]);
    expect(absent.note).toMatch(/^2 labels of later airline requests \(fresh-4\) not read: /);
    const outside = {
      ...laterLabels,
      related: [{ task: "fewshot-0", lessons: ["L0"], reason: "r" }],
      unrelated: [],
    };
    expect(() => labelledQueries(outside, loadRealFailures(later), later)).toThrow(/fresh-4 only/);
    const unknown = {
      ...laterLabels,
      unrelated: [{ source: "new-tau-bench/airline" as const, task: "revised-9", set: "fresh-4" as const }],
    };
    expect(() => labelledQueries(unknown, loadRealFailures(later), later)).toThrow(/revised-9/);
  });

  it("reports fresh-4 on a line of its own, out of every earlier line, and every label together", () => {
    const queries = [
      query("first related", { kind: "related", right: ["L0"] }),
      query("fresh-4 unrelated", { set: "fresh-4" }),
    ];
    const got = [[{ key: "L0", relevance: 0.5 }], [{ key: "L0", relevance: 0.5 }]];
    const { lines } = partsAt(0.3, queries, got);
    const line = (part: string) => lines.find((l) => l.startsWith(`${part.padEnd(7)} at floor`)) ?? "";
    expect(line("all")).toContain("100.0 % of 1 related; nothing above the floor - of 0");
    expect(line("fresh-4")).toContain("nothing above the floor 0.0 % of 1 unrelated");
    expect(line("every label")).toContain(
      "100.0 % of 1 related; nothing above the floor 0.0 % of 1 unrelated",
    );
  });
});
