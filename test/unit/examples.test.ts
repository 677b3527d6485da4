import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { TaskCompletedV1, type TaskCompleted } from "../../src/domain/contracts/index.js";
import { findingFromEvaluation } from "../../src/domain/evaluation/reflection-from-evaluation.js";
import { signatureInputFor } from "../../src/domain/signature.js";

const dir = new URL("../../examples/", import.meta.url);

interface Example {
  file: string;
  name: string;
  summary: string;
  events?: unknown[];
  raw?: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function loadExamples(): Promise<Example[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith(".json")).sort();
  return Promise.all(
    files.map(async (file) => {
      const parsed: unknown = JSON.parse(await readFile(new URL(file, dir), "utf8"));
      if (!isRecord(parsed)) throw new Error(`${file}: not a JSON object`);
      const { name, summary, events, raw } = parsed;
      if (typeof name !== "string" || typeof summary !== "string")
        throw new Error(`${file}: name and summary must be strings`);
      if (events !== undefined && !Array.isArray(events)) throw new Error(`${file}: events must be an array`);
      if (raw !== undefined && typeof raw !== "string") throw new Error(`${file}: raw must be a string`);
      return {
        file,
        name,
        summary,
        ...(events ? { events: events as unknown[] } : {}),
        ...(raw !== undefined ? { raw } : {}),
      };
    }),
  );
}

function parseEvent(example: Example, index: number): TaskCompleted {
  const result = TaskCompletedV1.safeParse(example.events?.[index]);
  if (!result.success) {
    const issues = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`).join("\n");
    throw new Error(`${example.file} event ${index} does not match TaskCompletedV1:\n${issues}`);
  }
  return result.data;
}

function find(examples: Example[], prefix: string): Example {
  const example = examples.find((e) => e.file.startsWith(prefix));
  if (!example) throw new Error(`no example file starting with ${prefix}`);
  return example;
}

const examples = await loadExamples();
const valid = examples.filter((e) => e.raw === undefined);

describe("examples/", () => {
  it("holds the fifteen examples, named NN-kebab-name.json", () => {
    expect(examples.map((e) => e.file.slice(0, 3))).toEqual(
      Array.from({ length: 15 }, (_, i) => `${String(i + 1).padStart(2, "0")}-`),
    );
    for (const { file } of examples) expect(file).toMatch(/^\d{2}-[a-z0-9]+(-[a-z0-9]+)*\.json$/);
  });

  it.each(examples.map((e) => [e.file, e] as const))(
    "%s has a name, a summary and either events or raw",
    (_, example) => {
      expect(example.name.trim()).not.toBe("");
      expect(example.summary.trim()).not.toBe("");
      expect(example.summary).not.toContain("\n");
      expect((example.events === undefined) !== (example.raw === undefined)).toBe(true);
      expect(example.events?.length ?? example.raw?.length).toBeGreaterThan(0);
    },
  );

  it.each(valid.map((e) => [e.file, e] as const))("%s: every event passes TaskCompletedV1", (_, example) => {
    for (const [i, raw] of (example.events ?? []).entries()) {
      const event = parseEvent(example, i);
      // What the schema accepts after its transforms is what was written: nothing is silently dropped.
      expect(event).toEqual(raw);
      expect(event.events.length).toBeGreaterThanOrEqual(3);
      expect(event.events.length).toBeLessThanOrEqual(8);
      const times = event.events.map((e) => Date.parse(e.timestamp));
      expect(times).toEqual([...times].sort((a, b) => a - b));
      expect(Date.parse(event.occurredAt)).toBeGreaterThanOrEqual(times.at(-1) ?? 0);
    }
  });

  it("gives every event its own eventId, so the demo's idempotency check never skips one", () => {
    const ids = valid.flatMap((e) => (e.events ?? []).map((_, i) => parseEvent(e, i).eventId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("has exactly one malformed example, and it fails validation with a clear reason", () => {
    const malformed = examples.filter((e) => e.raw !== undefined);
    expect(malformed.map((e) => e.file)).toEqual(["11-malformed-event.json"]);
    const raw = malformed[0]?.raw ?? "";
    const result = TaskCompletedV1.safeParse(JSON.parse(raw));
    expect(result.success).toBe(false);
    const paths = (result.error?.issues ?? []).map((i) => i.path.join("."));
    expect(paths).toEqual(expect.arrayContaining(["tenantId", "outcome"]));
  });

  it("links each step of a chain to the previous step's loopId", () => {
    const chains = valid.filter((e) => (e.events ?? []).some((_, i) => parseEvent(e, i).rerunOf));
    expect(chains.map((e) => e.file)).toEqual([
      "06-hotel-booking-chain.json",
      "07-summarizer-bias-echo.json",
      "14-postgres-query-timeout-rerun.json",
    ]);
    for (const chain of chains) {
      const steps = (chain.events ?? []).map((_, i) => parseEvent(chain, i));
      expect(steps[0]?.rerunOf).toBeUndefined();
      for (let i = 1; i < steps.length; i++) {
        expect(steps[i]?.rerunOf, `${chain.file} step ${i}`).toBe(steps[i - 1]?.loopId);
        expect(steps[i]?.loopId).toBe(`${steps[0]?.loopId ?? ""}_r${i}`);
        expect(steps[i]?.taskId).toBe(steps[0]?.taskId);
      }
    }
  });

  it("raises the hotel chain's bias tag at most twice, and the summarizer's three times", () => {
    const count = (example: Example, tag: string) =>
      (example.events ?? []).filter((_, i) => parseEvent(example, i).biasTags?.some((b) => b.tag === tag))
        .length;
    expect(count(find(examples, "06-"), "price_anchoring")).toBe(2);
    expect(count(find(examples, "07-"), "recency_bias")).toBe(3);
  });

  it("gives examples 01 and 10 the same error up to digits, so they share a signature", () => {
    const [a, b] = [find(examples, "01-"), find(examples, "10-")].map((e) => parseEvent(e, 0).error);
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    const digitless = (s: string | undefined) => s?.replace(/\d+/g, "#");
    expect(b?.type).toBe(a?.type);
    expect(b?.category).toBe(a?.category);
    expect(b?.code).toBe(a?.code);
    expect(digitless(b?.message)).toBe(digitless(a?.message));
    expect(b?.context).not.toEqual(a?.context);
  });

  it("13 is a success the agent corrected itself: a conflict finding that changed behaviour", () => {
    const event = parseEvent(find(examples, "13-"), 0);
    expect(event.outcome).toBe("success");
    expect(event.error).toBeUndefined();
    expect(findingFromEvaluation(event)).toMatchObject({ errorType: "conflict", changedBehaviour: true });
    expect(signatureInputFor(event).source).toBe("evaluation");
  });
});
