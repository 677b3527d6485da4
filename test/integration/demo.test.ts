import { randomUUID } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { runReflector } from "../support/cli-env.js";

/**
 * `reflector demo` (the README's first command) on the real services, with topics, groups and
 * key prefix of its own: both processors finish, every verdict appears for its reason, and the
 * recorded-answers pass is labelled as what it is.
 */

function demoEnv(): Record<string, string> {
  const id = randomUUID().slice(0, 8);
  return {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    KAFKA_BROKERS: inject("kafkaBrokers"),
    SCHEMA_REGISTRY_URL: inject("schemaRegistryUrl"),
    DATABASE_URL: inject("databaseUrl"),
    REDIS_URL: inject("redisUrl"),
    REDIS_KEY_PREFIX: `test-${id}`,
    KAFKA_GROUP_ID: `reflector-demo-${id}`,
    KAFKA_CLIENT_ID: `reflector-demo-${id}`,
    TOPIC_TASK_COMPLETED: `${id}.agent.task.completed`,
    TOPIC_REFLECTION_ACCEPTED: `${id}.reflection.accepted`,
    TOPIC_REFLECTION_REJECTED: `${id}.reflection.rejected`,
    TOPIC_LOOP_DECISION: `${id}.loop.decision`,
    TOPIC_DLQ: `${id}.agent.task.completed.dlq`,
    TOPIC_RETRY: `${id}.agent.task.completed.retry`,
    TOPIC_REFLECTION_FEEDBACK: `${id}.reflection.feedback`,
    TOPIC_PARTITIONS: "3",
    LOG_LEVEL: "warn",
  };
}

/** The numbers of a "Verdicts of N generated reflections (...): accepted a, … rejected r; recalled …" line. */
function verdictLine(output: string, generator: string) {
  const line = output.split("\n").find((l) => l.startsWith("Verdicts of ") && l.includes(`(${generator}`));
  const match =
    /accepted (\d+), accepted_with_warnings (\d+), rejected (\d+); recalled lessons judged again (\d+) times: accepted (\d+), accepted_with_warnings (\d+), rejected (\d+)/.exec(
      line ?? "",
    );
  if (!match) throw new Error(`no verdict line for ${generator} in:\n${output}`);
  const [accepted, warned, rejected, , recalledAccepted, recalledWarned, recalledRejected] = match
    .slice(1)
    .map(Number);
  return { accepted, warned, rejected, recalledAccepted, recalledWarned, recalledRejected };
}

/** The reasons printed under a reflection's verdict line ("  <example>: <verdict> (…)" then "    - …"). */
function reasonsOf(output: string, example: string, verdict: string): string[] {
  const lines = output.split("\n");
  const at = lines.findIndex((l) => l.startsWith(`  ${example}: ${verdict} (`));
  if (at < 0) throw new Error(`no "${example}: ${verdict}" in:\n${output}`);
  const reasons: string[] = [];
  for (const line of lines.slice(at + 1)) {
    if (!line.startsWith("    - ")) break;
    reasons.push(line.slice(6));
  }
  return reasons;
}

describe("reflector demo", () => {
  it("shows all three verdicts, each with the judge's reasons, and labels the recorded answers", async () => {
    const output = await runReflector(["demo"], demoEnv());
    expect(output).toContain("Demo finished.");
    expect(output).toMatch(/\(no duplicates\)/);

    // The offline generator: warnings for what it states without a cause, and a rejection where it
    // sees no cause at all (no lesson, so incomplete and not actionable).
    const offline = verdictLine(output, "heuristic");
    expect(offline.accepted).toBe(0);
    expect(offline.warned).toBeGreaterThan(0);
    expect(offline.rejected).toBeGreaterThanOrEqual(1);
    const rejectedWhy = reasonsOf(output, "Unexplained wrong answer", "rejected");
    expect(rejectedWhy.join("\n")).toMatch(/Incomplete reflection/);
    expect(rejectedWhy.join("\n")).toMatch(/not stored: rejected by the quality judge/);

    // The recorded answers: labelled as replayed, every request answered from a recording, and a
    // lesson accepted once its own recurrences prove its patterns.
    expect(output).toContain("RECORDED ANSWERS REPLAYED");
    expect(output).toContain("not a live model");
    expect(output).toMatch(/Chat requests answered from recordings [1-9]\d*, without a recording 0\./);
    const model = verdictLine(output, "openai");
    expect(model.warned).toBeGreaterThan(0);
    expect(model.recalledAccepted).toBeGreaterThanOrEqual(1);
    const acceptedAt = output
      .split("\n")
      .findIndex((l) => / accepted \(recalled lesson [0-9a-f]{16}, occurrence \d+/.test(l));
    expect(acceptedAt, "an accepted recalled lesson").toBeGreaterThan(0);
    const acceptedWhy = output
      .split("\n")
      .slice(acceptedAt + 1, acceptedAt + 3)
      .join("\n");
    expect(acceptedWhy).toMatch(/every check passed: completeness 1\.00 ≥ 0\.9, depth/);
    expect(acceptedWhy).toMatch(/its patterns are proven by the lesson's own recurrences \(occurrence [3-9]/);

    // Every warning is explained by at least one reason.
    const lines = output.split("\n");
    lines.forEach((line, i) => {
      if (/^ {2}\S.*: accepted_with_warnings \(/.test(line))
        expect(lines[i + 1], `the reasons of "${line}"`).toMatch(/^ {4}- /);
    });
    expect(output).toMatch(
      /Verdicts in the demo: accepted [1-9]\d*, accepted_with_warnings [1-9]\d*, rejected [1-9]\d*/,
    );
  });
});
