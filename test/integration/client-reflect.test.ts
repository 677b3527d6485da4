import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createReflectorClient, type ReflectorClient } from "../../src/client/index.js";
import { failure } from "../support/api-requests.js";
import { python3 } from "../support/client-packages.js";
import { startHarness, type Harness } from "../support/harness.js";

/**
 * Both clients' `reflect` against the real app (POST /api/v1/reflect on Kafka, Postgres and
 * Redis): an agent run (sent as an OTLP export) and a task event are reflected at once, the answer
 * read in each client's spelling; the same event again is the stored outcome (`replayed`), also
 * fetched by its event id.
 */
const run = randomUUID().slice(0, 8);
const tenant = `client-reflect-${run}`;
const key = `client-reflect-key-${run}`;
const root = fileURLToPath(new URL("../../", import.meta.url));
let h: Harness;
let client: ReflectorClient;
let baseUrl = "";

beforeAll(async () => {
  h = await startHarness({ env: { API_KEYS: `${key}:${tenant}:read+decide` } });
  baseUrl = `http://127.0.0.1:${String((h.app.http.server.address() as AddressInfo).port)}`;
  client = createReflectorClient({ baseUrl, apiKey: key });
});
afterAll(async () => {
  await h.close();
});

const event = (suffix: string) => ({
  ...failure(
    tenant,
    "QueryTimeout",
    `query on orders_${suffix} timed out after 30 s`,
    `Export orders ${suffix}`,
  ),
  eventId: `evt-${suffix}-${run}`,
  loopId: `loop-${suffix}-${run}`,
});

describe("reflect over HTTP from the clients", () => {
  it("TypeScript: an agent run and a task event, the reflection, verdict and decision in camelCase", async () => {
    const fromRun = await client.reflect({
      loopId: `loop-run-${run}`,
      agent: "exporter",
      task: "Export last quarter's orders",
      steps: [
        {
          kind: "tool",
          name: "postgres_query",
          input: "SELECT * FROM orders",
          error: { type: "query_timeout", message: "canceling statement due to statement timeout" },
        },
      ],
      error: { type: "tool_error", message: "the export query timed out" },
    });
    expect(fromRun).toMatchObject({
      status: "processed",
      loopId: `loop-run-${run}`,
      decision: { decision: "rerun" },
    });
    expect(["accepted", "accepted_with_warnings"]).toContain(fromRun.verdict);
    expect(fromRun.reflection?.strategyText).toMatch(/postgres_query/);

    const e = event("ts");
    const first = await client.reflect(e);
    expect(first).toMatchObject({ eventId: e.eventId, status: "processed", stored: true });
    const again = await client.reflect(e);
    expect(again).toEqual({ ...first, status: "replayed" });
    expect(await client.reflectOutcome(e.eventId)).toMatchObject({
      eventId: e.eventId,
      verdict: first.verdict,
    });
    expect(await client.reflectOutcome(`never-${run}`)).toBeNull();
  });

  it.skipIf(!python3)(
    "Python: a task event, the answer in snake_case, and its outcome by event id",
    async () => {
      const e = event("py");
      const script = [
        "import json, os, sys",
        "from reflector_client import ReflectorClient",
        "c = ReflectorClient(os.environ['REFLECTOR_URL'], os.environ['REFLECTOR_API_KEY'])",
        "e = json.loads(sys.stdin.read())",
        "print(json.dumps([c.reflect(e), c.reflect_outcome(e['eventId']), c.reflect_outcome('never-' + e['eventId'])]))",
      ].join("\n");
      const child = execFile("python3", ["-c", script], {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? "",
          PYTHONPATH: "clients/python/src",
          REFLECTOR_URL: baseUrl,
          REFLECTOR_API_KEY: key,
        },
      });
      child.stdin?.end(JSON.stringify(e));
      const out = await new Promise<string>((resolve, reject) => {
        let text = "";
        child.stdout?.on("data", (d: Buffer) => {
          text += d.toString();
        });
        child.on("exit", (code) => {
          if (code === 0) resolve(text);
          else reject(new Error(`python3 exited ${String(code)}`));
        });
      });
      const [first, outcome, missing] = JSON.parse(out) as [
        Record<string, unknown>,
        Record<string, unknown>,
        null,
      ];
      expect(first).toMatchObject({
        event_id: e.eventId,
        status: "processed",
        decision: { decision: "rerun" },
      });
      expect(outcome).toMatchObject({ event_id: e.eventId, status: "replayed", verdict: first.verdict });
      expect(missing).toBeNull();
    },
  );
});
