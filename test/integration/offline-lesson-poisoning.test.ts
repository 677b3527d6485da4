import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TaskCompleted } from "../../src/domain/contracts/index.js";
import { generateHeuristicReflection } from "../../src/domain/heuristic/generate-heuristic-reflection.js";
import { identifierOf } from "../../src/domain/heuristic/instruction-slots.js";
import { poisoned } from "../fixtures/screen/obfuscation-corpus.js";
import { hostileTraces, plainOrders } from "../fixtures/screen/hostile-traces.js";
import { startHarness, type Harness } from "../support/harness.js";
import { waitFor } from "../support/wait-for.js";

/**
 * Hostile text in failing traces, through the whole service: the traces are published to Kafka,
 * the processor writes offline lessons (no model) and stores them in Postgres, and
 * `POST /api/v1/lessons/for-task` serves them. No instruction stored or served may carry a word of
 * the text that is not an identifier, nor the text itself: the offline generator's instructions are
 * its own words. The text is the examples of obfuscated commands and orders, and orders in
 * plain words that no screen can tell from advice, each in every place of a trace.
 */

/** The review's examples (issue 36), by their names in the obfuscation corpus. */
const examples = [
  "absolute path to curl",
  "absolute path to sh",
  "backslash-escaped curl",
  "brace expansion",
  "Cyrillic homoglyph in curl",
  "full-width letters",
  "zero-width inside curl",
  "bidi override",
  "scheme-less domain",
  "defanged hxxps",
  "base64 and run it",
  "pip install look-alike",
  "verify_ssl = false",
  "e-mail exfiltration",
  "ignore all previous instructions",
];
const payloads = [...poisoned.filter(([kind]) => examples.includes(kind)), ...plainOrders];

let h: Harness;
let apiKey = "";
let tenantId = "";
const events: { event: TaskCompleted; payload: string }[] = [];

beforeAll(async () => {
  const id = Math.random().toString(36).slice(2, 10);
  apiKey = `offline-poison-key-${id}`;
  tenantId = `offline-poison-${id}`;
  h = await startHarness({ env: { API_KEYS: `${apiKey}:${tenantId}:read`, LESSONS_NEW_PER_MINUTE: "0" } });
  payloads.forEach(([, payload], p) => {
    hostileTraces(payload).forEach(([where, event], w) => {
      const n = `${String(p)}-${String(w)}`;
      events.push({
        payload,
        event: {
          ...event,
          tenantId,
          eventId: `evt-${id}-${n}`,
          taskId: `task-${n}`,
          loopId: `loop-${id}-${n}`,
          task: { ...event.task, description: `Handle the order request (${where})` },
        },
      });
    });
  });
});

afterAll(async () => {
  await h.pool.query("DELETE FROM reflections WHERE tenant_id = $1", [tenantId]);
  await h.close();
});

/** Every published event answered: its outcome on the accepted or rejected topic, or the dead-letter topic. */
async function allProcessed(): Promise<void> {
  const t = h.config.topics;
  await waitFor(
    () => {
      const answered = new Set(
        h.collected
          .filter((c) => c.topic === t.reflectionAccepted || c.topic === t.reflectionRejected)
          .map((c) => String(c.value?.sourceEventId)),
      );
      const dead = h.on(t.deadLetter).length;
      return answered.size + dead >= events.length ? true : undefined;
    },
    { timeoutMs: 240_000, intervalMs: 500, what: `${String(events.length)} events processed` },
  );
}

async function forTask(task: string) {
  const port = (h.app.http.server.address() as AddressInfo).port;
  const res = await fetch(`http://127.0.0.1:${String(port)}/api/v1/lessons/for-task`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ task, limit: 50, minRelevance: 0, minImportance: 0 }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { lessons: { strategyText: string; adjustments: string[]; prompt: string }[] };
}

/** Three words of a text in a row, in lower case. */
const phrasesOf = (text: string) => {
  const words = text.normalize("NFKC").toLowerCase().split(/\s+/).filter(Boolean);
  return words.slice(0, -2).map((w, i) => `${w} ${words[i + 1] ?? ""} ${words[i + 2] ?? ""}`);
};

/**
 * What of a payload a text carries: its words that are not identifiers, the whole payload, or three
 * of its words in a row that the generator's instructions for the same traces with harmless text
 * in its place do not hold (those are the generator's own words).
 */
function carried(text: string, payload: string, own: string): string[] {
  const words = payload.split(/\s+/).filter((t) => t.length >= 2 && identifierOf(t) === undefined);
  const lower = text.normalize("NFKC").toLowerCase();
  return [
    ...[...words, payload].filter((w) => text.includes(w)),
    ...phrasesOf(payload).filter((p) => lower.includes(p) && !own.includes(p)),
  ];
}

/** The offline generator's instructions for every trace with harmless text: its own words. */
const ownWords = hostileTraces("nothing else was reported")
  .map(([, event]) => generateHeuristicReflection(event))
  .flatMap((r) => [r.strategyText ?? "", r.learning, ...r.adjustments, ...r.tags, ...r.patterns])
  .join("\n")
  .normalize("NFKC")
  .toLowerCase();

describe("hostile trace text through Kafka, Postgres and lessons for a task", () => {
  it("stores and serves offline lessons whose instructions hold nothing of it", async () => {
    expect(events.length).toBe(payloads.length * hostileTraces("x").length);
    for (const { event } of events) await h.publish(event);
    await allProcessed();

    const rows = await h.pool.query<{
      strategy_text: string | null;
      learning: string;
      adjustments: string[];
      tags: string[];
      patterns: string[];
    }>("SELECT strategy_text, learning, adjustments, tags, patterns FROM reflections WHERE tenant_id = $1", [
      tenantId,
    ]);
    // Lessons were written and stored: the traces are failures with a lesson, hostile text aside.
    expect(rows.rows.length).toBeGreaterThan(0);
    const stored = rows.rows
      .flatMap((r) => [r.strategy_text ?? "", r.learning, ...r.adjustments, ...r.tags, ...r.patterns])
      .join("\n");

    const served: string[] = [];
    for (const where of hostileTraces("x").map(([w]) => w)) {
      const got = await forTask(`Handle the order request (${where})`);
      served.push(...got.lessons.flatMap((l) => [l.strategyText, ...l.adjustments, l.prompt]));
    }
    expect(served.length).toBeGreaterThan(0);
    const servedText = served.join("\n");

    const found = payloads.flatMap(([kind, payload]) => [
      ...carried(stored, payload, ownWords).map((w) => `stored (${kind}): ${w}`),
      ...carried(servedText, payload, ownWords).map((w) => `served (${kind}): ${w}`),
    ]);
    expect(found).toEqual([]);
  }, 300_000);
});
