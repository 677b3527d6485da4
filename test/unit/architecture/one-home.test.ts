import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * A rule or a port has one home: declared in one file, named here, so a second declaration (or a
 * move back to the old room) fails. The import rules of `npm run layers` keep the rooms apart;
 * this keeps each name in its room.
 */
const root = fileURLToPath(new URL("../../../src/", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

const sources = sourceFiles(root).map((path) => ({
  file: relative(root, path),
  text: readFileSync(path, "utf8"),
}));

function declaredIn(pattern: RegExp): string[] {
  return sources
    .filter((s) => pattern.test(s.text))
    .map((s) => s.file)
    .sort();
}

describe("each rule and port is declared in one file", () => {
  it.each([
    [
      "the quality configuration from config",
      /export function buildQualityConfig\b/,
      "composition/quality-config.ts",
    ],
    ["the outcome's body", /export function outcomeBody\b/, "pipeline/outcome-message.ts"],
    [
      "the occurrence count applied to the outcome",
      /export function withOccurrences\b/,
      "pipeline/outcome-message.ts",
    ],
    ["the quality observer port", /export interface QualityObserver\b/, "pipeline/ports.ts"],
    ["the lesson check port", /export interface LessonCheck\b/, "pipeline/lesson-check.ts"],
    ["the features' route context", /export interface ApiContext\b/, "features/api-context.ts"],
    [
      "the partition's ordered scheduler",
      /export class PartitionScheduler\b/,
      "adapters/kafka/ordered-scheduler.ts",
    ],
    ["the consumer's failure policy", /export function nextStep\b/, "adapters/kafka/failure-policy.ts"],
  ])("%s", (_name, pattern, home) => {
    expect(declaredIn(pattern)).toEqual([home]);
  });
});
