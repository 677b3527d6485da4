import { describe, expect, it } from "vitest";
import { isLowInformationMessage } from "../../../../src/domain/memory/low-information.js";

describe("low-information failure messages", () => {
  it.each([
    "the final answer was judged incorrect",
    "The final answer was judged INCORRECT.",
    "Task failed",
    "answer does not match the ground truth",
    "Wrong answer (score <n>)",
    "",
  ])("%j says only that the task failed", (message) => {
    expect(isLowInformationMessage(message)).toBe(true);
  });

  it.each([
    "Query execution exceeded 30s limit",
    "Lock wait on table orders exceeded 15s",
    "401 Unauthorized: token expired",
    "the final answer was judged incorrect: expected a date in ISO format",
  ])("%j names something specific", (message) => {
    expect(isLowInformationMessage(message)).toBe(false);
  });

  it("reads a megabyte of text in one pass", () => {
    expect(isLowInformationMessage("failed ".repeat(150_000))).toBe(true);
    expect(isLowInformationMessage(`${"a".repeat(1_000_000)}!`)).toBe(false);
  });
});
