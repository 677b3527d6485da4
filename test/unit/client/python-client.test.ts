import { execFile, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

/**
 * The Python client's own tests (clients/python/tests, the standard library's unittest against a
 * local HTTP server): retries on 429/503 honouring Retry-After, time limits, problem details, the
 * snake_case wire and its fallbacks, and the lessons framed as advice given as data. The
 * installed package runs the agent loop in test/integration/agent-loop-example.test.ts.
 */
const root = fileURLToPath(new URL("../../../", import.meta.url));
const hasPython = spawnSync("python3", ["--version"]).status === 0;
if (!hasPython) console.warn("python3 is not installed: the Python client's unit tests are skipped");

describe("the Python client", () => {
  it.skipIf(!hasPython)("passes its unittest suite", async () => {
    const { stderr } = await promisify(execFile)(
      "python3",
      ["-m", "unittest", "discover", "-s", "clients/python/tests", "-v"],
      { cwd: root, env: { ...process.env, PYTHONPATH: "clients/python/src", PYTHONDONTWRITEBYTECODE: "1" } },
    );
    // unittest reports on stderr: every test ok, and as many as the suite has.
    expect(stderr).toMatch(/\nOK\s*$/);
    expect(stderr).toMatch(/Ran 10 tests/);
  });
});
