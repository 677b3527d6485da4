import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { signatureFor } from "../../../src/domain/signature.js";
import { taskEvent } from "../../support/task-events.js";

/** The first commands a new operator types, run as they would run them (a child process). */
const cli = fileURLToPath(new URL("../../support/run-cli.ts", import.meta.url));
const run = promisify(execFile);
const reflector = async (args: string[], env: Record<string, string> = {}) => {
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", cli, ...args], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
};

describe("the CLI's first ten minutes", { timeout: 30_000 }, () => {
  it("prints its version", async () => {
    const { version } = JSON.parse(
      readFileSync(new URL("../../../package.json", import.meta.url), "utf8"),
    ) as { version: string };
    const out = await reflector(["--version"]);
    expect(out).toMatchObject({ code: 0 });
    expect(out.stdout.trim()).toBe(version);
  });

  it("refuses a migration count that is not a number instead of migrating up", async () => {
    // No database is reachable at this address: a run that went on would fail another way.
    const out = await reflector(["migrate", "--down", "abc"], {
      DATABASE_URL: "postgres://nobody@127.0.0.1:1/none",
    });
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('"abc" is not a number of migrations');
    expect(out.stdout).not.toContain("applied");
  });

  it("never prints the API key from the environment in help", async () => {
    const out = await reflector(["lessons", "--help"], { REFLECTOR_API_KEY: "do-not-print-me-4242" });
    expect(out.code).toBe(0);
    expect(out.stdout).toContain("--key <key>");
    expect(out.stdout + out.stderr).not.toContain("do-not-print-me-4242");
  });

  it("says in one line, without a stack trace, that the model endpoint failed", async () => {
    const example = fileURLToPath(
      new URL("../../../examples/01-postgres-query-timeout.json", import.meta.url),
    );
    const out = await reflector(["reflect", example], {
      REFLECTOR_GENERATOR: "openai",
      OPENAI_BASE_URL: "http://127.0.0.1:1/v1",
      REFLECTOR_MODEL: "any",
      OPENAI_MAX_RETRIES: "0",
    });
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^reflector reflect: LLM_UNAVAILABLE: openai generator \(connection\)/);
    expect(out.stderr).not.toMatch(/\n\s+at /);
  });

  it("prints the signature the pipeline files the README's example error under", async () => {
    const event = taskEvent({
      outcome: "failure",
      error: { category: "timeout", type: "query_timeout", message: "Query execution exceeded 30s limit" },
    });
    const out = await reflector([
      "signature",
      "--type",
      "query_timeout",
      "--content",
      "Query execution exceeded 30s limit",
    ]);
    expect(out.stdout.trim()).toBe(signatureFor(event));
    const coded = taskEvent({
      outcome: "failure",
      error: { category: "timeout", type: "query_timeout", code: "57014", message: "canceling statement" },
    });
    const withCode = await reflector([
      "signature",
      "--type",
      "query_timeout",
      "--code",
      "57014",
      "--content",
      "canceling statement",
    ]);
    expect(withCode.stdout.trim()).toBe(signatureFor(coded));
  });

  it("says within its timeout that no broker answers, instead of waiting in silence", async () => {
    const started = Date.now();
    const out = await reflector(["lag", "--timeout", "1500"], { KAFKA_BROKERS: "127.0.0.1:1" });
    expect(out.code).toBe(1);
    expect(out.stderr).toContain("reflector: lag failed");
    expect(out.stderr).toContain("127.0.0.1:1");
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});
