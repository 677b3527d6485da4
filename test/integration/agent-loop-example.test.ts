import { execFile } from "node:child_process";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHarness, type Harness } from "../support/harness.js";

/**
 * examples/agent-loop/agent-loop.ts as an agent author would run it, against a running Reflector
 * (OTLP/HTTP, its bridge, the processor with the offline generator, the HTTP API): the first
 * attempt fails, the decision is `rerun` with a lesson, the rerun has the lesson in its prompt and
 * succeeds, and that loop is finalized.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const example = fileURLToPath(new URL("../../examples/agent-loop/agent-loop.ts", import.meta.url));
const pythonExample = fileURLToPath(new URL("../../examples/agent-loop/agent_loop.py", import.meta.url));
const run = promisify(execFile);
let h: Harness;
let apiKey = "";

beforeAll(async () => {
  apiKey = `agent-loop-key-${Math.random().toString(36).slice(2, 10)}`;
  h = await startHarness({
    env: {
      OTLP_TOPIC: `loop-${Math.random().toString(36).slice(2, 8)}.otlp_spans`,
      OTLP_TRACE_GRACE_MS: "200",
      OTLP_TRACE_TIMEOUT_MS: "3000",
      OTLP_SWEEP_INTERVAL_MS: "100",
      API_KEYS: `${apiKey}:agent-loop-tenant-${String(Date.now())}:read+decide`,
    },
  });
});

afterAll(async () => {
  await h.close();
});

/** What the example printed between "lessons for the rerun:" and its second attempt. */
const lessonBlock = (stdout: string) =>
  stdout.slice(stdout.indexOf("lessons for the rerun:"), stdout.indexOf("attempt 2"));

/** The same loop written twice, as agent authors would: TypeScript, and Python with the standard library only. */
const examples = [
  {
    language: "TypeScript",
    command: process.execPath,
    args: ["--import", "tsx", example],
    loop: "orders-export",
  },
  { language: "Python", command: "python3", args: [pythonExample], loop: "orders-export-py" },
];

describe("the example agent loop", () => {
  it.each(examples)(
    "$language: fails, gets a rerun with a lesson, reruns with the lesson in its prompt and succeeds",
    async ({ command, args, loop }) => {
      const port = (h.app.http.server.address() as AddressInfo).port;
      const { stdout, stderr, code } = await run(command, args, {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? "",
          REFLECTOR_URL: `http://127.0.0.1:${String(port)}`,
          REFLECTOR_API_KEY: apiKey,
          TIMEOUT_MS: "60000",
        },
        timeout: 120_000,
      }).then(
        (done) => ({ ...done, code: 0 }),
        (err: unknown) => err as { stdout: string; stderr: string; code: number },
      );
      console.log(stdout);
      expect(stderr).toBe("");
      expect(code).toBe(0);
      const lines = stdout.trim().split("\n");
      expect(lines[0]).toMatch(
        new RegExp(`^attempt 1 \\(loop ${loop}-\\w+\\): failed — the export query timed out$`),
      );
      expect(lines[1]).toMatch(/^decision: rerun/);
      expect(lines[2]).toBe("lessons for the rerun:");
      // The lesson (a prompt of several lines) is about the failing tool, and it is what changes the rerun.
      expect(lessonBlock(stdout)).toMatch(/postgres_query/);
      expect(stdout).toMatch(/attempt 2 \(loop \S+\): succeeded\ndecision: finalize/);
    },
    150_000,
  );
});
