import { describe, expect, it } from "vitest";
import { cutMiddle, traceStepTextMaxChars } from "../../../src/domain/contracts/cut-text.js";
import { TaskCompletedV1 } from "../../../src/domain/contracts/index.js";
import { jsonSchemaFor } from "../../../src/domain/contracts/json-schema.js";
import { multiAgentTrace } from "../../support/multi-agent-trace.js";
import { taskEvent } from "../../support/task-events.js";

describe("long trace steps", () => {
  it("accepts an 88k-character step and cuts it in the middle with a visible marker", () => {
    const head = "HEAD:" + "a".repeat(43_995);
    const tail = "b".repeat(43_995) + ":TAIL";
    const event = taskEvent();
    const long = { ...event.events[0], eventId: "long", content: head + tail } as (typeof event.events)[0];
    const parsed = TaskCompletedV1.parse({ ...event, events: [long, ...event.events] });
    const content = parsed.events[0]?.content ?? "";
    expect(content.length).toBeLessThanOrEqual(traceStepTextMaxChars);
    expect(content.startsWith("HEAD:")).toBe(true);
    expect(content.endsWith(":TAIL")).toBe(true);
    const cut = /…\[cut ([\d,]+) characters\]…/.exec(content);
    expect(cut?.[1]).toBeDefined();
    // What is kept plus what the marker says was cut is the original length.
    const kept = content.length - (cut?.[0].length ?? 0) - 2;
    expect(kept + Number(cut?.[1]?.replace(/,/g, ""))).toBe(88_000);
    // Steps within the limit are untouched.
    expect(parsed.events.slice(1)).toEqual(event.events);
  });

  it("cuts a step's long error message too, and keeps surrogate pairs whole", () => {
    const event = taskEvent();
    const [first, second] = event.events;
    const failing = { ...second, error: { message: "x".repeat(100_000), code: "E" } } as typeof second;
    const parsed = TaskCompletedV1.parse({ ...event, events: [first, failing] });
    expect(parsed.events[1]?.error?.message?.length).toBeLessThanOrEqual(traceStepTextMaxChars);
    expect(parsed.events[1]?.error?.message).toContain("characters]…");

    const emoji = "😀".repeat(50);
    for (let max = 40; max < 70; max += 1) {
      const out = cutMiddle(emoji, max);
      expect(out.length).toBeLessThanOrEqual(max);
      expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    }
    expect(cutMiddle("short", 10)).toBe("short");
  });

  it("passes a 130-step, 340 KB multi-agent trace with an 80k-character step", () => {
    const event = multiAgentTrace();
    expect(event.events).toHaveLength(130);
    const bytes = Buffer.byteLength(JSON.stringify(event));
    expect(bytes).toBeGreaterThan(330_000);
    expect(bytes).toBeLessThan(400_000);
    const parsed = TaskCompletedV1.parse(event);
    const big = parsed.events[40]?.content ?? "";
    expect(big.length).toBeLessThanOrEqual(traceStepTextMaxChars);
    expect(big.length).toBeGreaterThan(traceStepTextMaxChars - 100);
    expect(big).toContain("characters]…");
    expect(parsed.events.map((e) => e.actor)).toEqual(event.events.map((e) => e.actor));
  });

  it("documents the limit in the JSON Schema instead of refusing longer text", () => {
    const schema = jsonSchemaFor("task-completed.v1") as {
      properties: { events: { items: { properties: Record<string, Record<string, unknown>> } } };
    };
    const step = schema.properties.events.items.properties;
    for (const text of [
      step.content,
      (step.error as { properties: Record<string, Record<string, unknown>> }).properties.message,
    ]) {
      expect(text).not.toHaveProperty("maxLength");
      expect(text?.type).toBe("string");
      expect(String(text?.description)).toContain(
        `Longer than ${String(traceStepTextMaxChars)} characters is accepted and cut`,
      );
    }
  });
});
