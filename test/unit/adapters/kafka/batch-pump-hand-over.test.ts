import { describe, expect, it } from "vitest";
import { record, setup, tick } from "./batch-pump-fakes.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the batch pump: a deferred tenant's slow events no longer hold another tenant's commits", () => {
  it("hands a running event of a tenant being deferred to the retry topic once it ran too long, and commits the other tenant's event behind it", async () => {
    const { pumpBatch, finish, ran, committed, commits, signals } = setup({
      perTenant: 2,
      handOverAfterMs: 50,
    });
    // Tenant a floods the partition: two of its events run (its share), the rest are deferred;
    // tenant b's event after them runs and ends at once.
    const messages = [
      ...Array.from({ length: 4 }, (_, i) => record(i, "a", `a-loop-${String(i)}`)),
      record(4, "b", "b-loop"),
    ];
    const pumped = pumpBatch("in", messages);
    await tick();
    expect(ran).toEqual(["0", "1", "4"]);
    await finish("4");
    // a's two never end here: past the bound they go to the retry topic (unprocessed as far as
    // this partition is concerned), and b's output commits with them.
    await sleep(200);
    await tick();
    expect(committed()).toEqual(["retry:0", "retry:1", "retry:2", "retry:3", "out:4"]);
    expect(commits.at(-1)?.nextOffset).toBe("5");
    // The runs handed over are told to stop (a retry or a hold of theirs ends there).
    expect(signals.get("0")?.aborted).toBe(true);
    expect(signals.get("4")?.aborted).toBe(false);
    // Their late ends change nothing: no second output, no failure of the partition.
    await finish("0");
    await finish("1", new Error("late failure of a run handed over"));
    await pumped;
    expect(committed()).toEqual(["retry:0", "retry:1", "retry:2", "retry:3", "out:4"]);
  });

  it("keeps a slow event of a tenant that is not being deferred where it is", async () => {
    const { pumpBatch, finish, committed } = setup({ perTenant: 2, handOverAfterMs: 50 });
    const pumped = pumpBatch("in", [record(0, "b", "b-0"), record(1, "c", "c-1")]);
    await tick();
    await finish("1");
    await sleep(200);
    await tick();
    expect(committed()).toEqual([]);
    await finish("0");
    await pumped;
    expect(committed()).toEqual(["out:0", "out:1"]);
  });

  it("does not hand over what runs on the retry topic (it is already there)", async () => {
    const { pumpBatch, finish, committed } = setup({ perTenant: 1, handOverAfterMs: 50 });
    const pumped = pumpBatch("retry", [record(0, "a", "a-0"), record(1, "a", "a-1"), record(2, "b", "b-2")]);
    await tick();
    await finish("2");
    await sleep(200);
    await tick();
    expect(committed()).toEqual([]);
    await finish("0");
    await tick();
    await finish("1");
    await pumped;
    expect(committed()).toEqual(["out:0", "out:1", "out:2"]);
  });
});
