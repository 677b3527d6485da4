import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  installPythonClient,
  packTypeScriptClient,
  python3,
  type PackedTypeScript,
} from "../support/client-packages.js";
import { startHarness, type Harness } from "../support/harness.js";

/**
 * examples/agent-loop/ as agent authors would run it, each from its client package as installed
 * by its users: the TypeScript loop imports `@reflector/client` from the tarball `npm pack` made
 * (installed into an empty project, type-checked and compiled there), the Python loop imports
 * `reflector_client` installed by pip into a fresh virtual environment. Against a running
 * Reflector (OTLP/HTTP, its bridge, the processor with the offline generator, the HTTP API): the
 * first attempt fails, the decision is `rerun` with a lesson, the rerun has the lesson in its
 * prompt and succeeds, and that loop is finalized.
 */
const pythonExample = fileURLToPath(new URL("../../examples/agent-loop/agent_loop.py", import.meta.url));
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), "reflector-clients-"));
let h: Harness;
let apiKey = "";
let packed: PackedTypeScript;
let venvPython = "";

if (!python3) console.warn("python3 is not installed: the Python client's test is skipped");

beforeAll(async () => {
  // Both packages are built here, from the sources: a fresh clone has no clients/typescript/dist.
  const packages = Promise.all([
    packTypeScriptClient(work),
    python3 ? installPythonClient(work) : Promise.resolve(""),
  ]);
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
  [packed, venvPython] = await packages;
}, 300_000);

afterAll(async () => {
  await h.close();
  rmSync(work, { recursive: true, force: true });
});

/** What the example printed between "lessons for the rerun:" and its second attempt. */
const lessonBlock = (stdout: string) =>
  stdout.slice(stdout.indexOf("lessons for the rerun:"), stdout.indexOf("attempt 2"));

describe("the TypeScript client package", () => {
  it("packs its build, its types and its README, and depends on nothing", async () => {
    expect(packed.files).toEqual(expect.arrayContaining(["dist/index.js", "dist/index.d.ts", "README.md"]));
    expect(
      packed.files.filter((f) => !/^(dist\/[\w-]+\.(js|d\.ts)|README\.md|package\.json)$/.test(f)),
    ).toEqual([]);
    const listed = await run("tar", ["-xzOf", packed.tarball, "package/package.json"]);
    const manifest = JSON.parse(listed.stdout) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: "@reflector/client", version: "0.1.0", type: "module" });
    expect(manifest.dependencies).toBeUndefined();
  });
});

/** Runs one example against the running Reflector, from the temporary folder (nothing of the repository on its import path). */
async function runExample(command: string, args: string[]) {
  const port = (h.app.http.server.address() as AddressInfo).port;
  return run(command, args, {
    cwd: work,
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
}

/** What both examples print: a failure, a rerun with a lesson about the failing tool, a success. */
function expectTheLoop(result: { stdout: string; stderr: string; code: number }, loop: string) {
  const { stdout, stderr, code } = result;
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
}

describe("the example agent loop, from its client package", () => {
  it("TypeScript (@reflector/client from npm pack): fails, gets a rerun with a lesson, reruns with the lesson in its prompt and succeeds", async () => {
    expectTheLoop(await runExample(process.execPath, [packed.script]), "orders-export");
  }, 150_000);

  it.skipIf(!python3)(
    "Python (reflector_client installed by pip in a fresh venv): the same loop",
    async () => {
      expectTheLoop(await runExample(venvPython, [pythonExample]), "orders-export-py");
    },
    150_000,
  );
});
