import { describe, expect, it } from "vitest";
import { filesMatching } from "../../support/source-files.js";

/**
 * A rule or a port has one home: declared in one file, named here, so a second declaration (or a
 * move back to the old room) fails. The import rules of `npm run layers` keep the rooms apart;
 * this keeps each name in its room.
 */
describe("each rule and port is declared in one file", () => {
  it.each([
    [
      "the quality configuration from config",
      /export function buildQualityConfig\b/,
      "composition/quality-config.ts",
    ],
    [
      "a consumed value read against its contract",
      /export function parseContract\b/,
      "domain/contracts/parse-contract.ts",
    ],
    ["the API keys parsed", /export function parseApiKeys\b/, "config/api-keys-setting.ts"],
    ["a Postgres transaction", /["'`]BEGIN["'`]/, "adapters/postgres/in-transaction.ts"],
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
    expect(filesMatching(pattern)).toEqual([home]);
  });
});
