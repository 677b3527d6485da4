import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { boundTopics, watchBoundTopics } from "../../../../src/adapters/kafka/tenant-topics.js";
import { parseTenantTopicBinding } from "../../../../src/domain/tenant-topic-binding.js";

const binding = parseTenantTopicBinding("acme=agents.acme.*,globex=agents.globex.tasks");

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("bound topics", () => {
  it("are the cluster's topics the binding covers, by prefix or exact name, sorted", async () => {
    const admin = {
      listTopics: () =>
        Promise.resolve(["agents.globex.tasks", "agents.acme.b", "agents.acme.a", "agents.other", "x"]),
    };
    expect(await boundTopics(admin, binding)).toEqual([
      "agents.acme.a",
      "agents.acme.b",
      "agents.globex.tasks",
    ]);
  });

  it("reports a bound topic created after the subscription once, and keeps quiet before", async () => {
    let topics = ["agents.acme.a"];
    const reports: string[][] = [];
    const errors: unknown[] = [];
    const watch = watchBoundTopics({
      list: () => Promise.resolve(topics),
      subscribed: ["agents.acme.a"],
      intervalMs: 1_000,
      onNew: (added) => reports.push(added),
      onError: (err) => errors.push(err),
    });
    await vi.advanceTimersByTimeAsync(3_000);
    expect(reports).toEqual([]);
    topics = ["agents.acme.a", "agents.acme.late"];
    await vi.advanceTimersByTimeAsync(1_000);
    expect(reports).toEqual([["agents.acme.late"]]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(reports).toHaveLength(1);
    expect(errors).toEqual([]);
    watch.stop();
  });

  it("reports a failed listing and tries again on the next tick", async () => {
    let fail = true;
    const reports: string[][] = [];
    const errors: unknown[] = [];
    const watch = watchBoundTopics({
      list: () => (fail ? Promise.reject(new Error("broker down")) : Promise.resolve(["agents.acme.new"])),
      subscribed: [],
      intervalMs: 1_000,
      onNew: (added) => reports.push(added),
      onError: (err) => errors.push(err),
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(errors).toHaveLength(1);
    fail = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(reports).toEqual([["agents.acme.new"]]);
    watch.stop();
  });
});
