import { describe, expect, it, vi } from "vitest";
import { record, setup, tick } from "./batch-pump-fakes.js";

describe("the batch pump: a tenant's share of the events in flight", () => {
  it("hands a flooding tenant's events over its share to the retry topic, so another tenant's event is not queued behind them", async () => {
    const { pumpBatch, finish, ran, committed, commits } = setup({ perTenant: 2 });
    // Tenant a floods the partition (ten loops), tenant b's one event comes after.
    const messages = [
      ...Array.from({ length: 10 }, (_, i) => record(i, "a", `a-loop-${String(i)}`)),
      record(10, "b", "b-loop"),
    ];
    const pumped = pumpBatch("in", messages);
    await tick();
    // a runs two (its share), b's event runs at once; a's other eight are not run here.
    expect(ran).toEqual(["0", "1", "10"]);
    await finish("10");
    await finish("0");
    await finish("1");
    await pumped;
    expect(committed()).toEqual([
      "out:0",
      "out:1",
      ...Array.from({ length: 8 }, (_, i) => `retry:${String(i + 2)}`),
      "out:10",
    ]);
    expect(commits.at(-1)?.nextOffset).toBe("11");
  });

  it("sends a loop family's later events after the ones it deferred, even once the tenant is under its share", async () => {
    const { pumpBatch, finish, ran, committed } = setup({ perTenant: 1 });
    const first = pumpBatch("in", [record(0, "a", "loop-x"), record(1, "a", "loop-y")]);
    await tick();
    expect(ran).toEqual(["0"]);
    await finish("0");
    await first;
    // A minute later tenant a is no longer being deferred and has nothing in flight; loop-y's next
    // event still follows its first to the retry topic, loop-z's runs.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 60_000);
      const second = pumpBatch("in", [record(2, "a", "loop-y"), record(3, "a", "loop-z")]);
      await tick();
      expect(ran).toEqual(["0", "3"]);
      await finish("3");
      await second;
    } finally {
      vi.useRealTimers();
    }
    expect(committed()).toEqual(["out:0", "retry:1", "retry:2", "out:3"]);
  });

  it("ends a batch after its round and commits its events still running with the partition's next batch", async () => {
    const { pumpBatch, finish, ran, committed, resolved } = setup({ perTenant: 1, roundMs: 0 });
    // Deferred events of tenant a on the retry topic are processed there as its share allows.
    const messages = [record(0, "a", "l0"), record(1, "a", "l1"), record(2, "b", "l2")];
    await pumpBatch("retry", messages);
    // The round is over at once: a's first and b's event run on, nothing is committed yet.
    expect(ran).toEqual(["0", "2"]);
    expect(committed()).toEqual([]);
    await finish("0");
    await finish("2");
    // The partition's next batch fetches again what is not committed: known offsets are not run
    // again, the done ones are committed, and a's next event starts.
    await pumpBatch("retry", messages);
    expect(committed()).toEqual(["out:0"]);
    // The next fetch begins at the last record held (see positionFetch).
    expect(resolved).toEqual(["1"]);
    expect(ran).toEqual(["0", "2", "1"]);
    await finish("1");
    await pumpBatch("retry", messages.slice(1));
    expect(committed()).toEqual(["out:0", "out:1", "out:2"]);
    expect(resolved).toEqual(["1", "2"]);
    expect(ran).toEqual(["0", "2", "1"]);
  });

  it("starts the partition anew when the fetch skipped what it held (another member committed it)", async () => {
    const { pumpBatch, ran } = setup({ perTenant: 0, roundMs: 0 });
    await pumpBatch("in", [record(0, "a", "l0"), record(1, "a", "l1")]);
    expect(ran).toEqual(["0", "1"]);
    // Offsets 0 and 1 never committed here, yet the fetch begins at 5: they are not ours to commit.
    await pumpBatch("in", [record(5, "a", "l0"), record(6, "b", "l2")]);
    expect(ran).toEqual(["0", "1", "5", "6"]);
  });

  it("keeps handing a tenant's new input events to the retry topic while it was deferred lately, though under its share", async () => {
    const { pumpBatch, finish, ran, committed } = setup({ perTenant: 1 });
    const first = pumpBatch("in", [record(0, "a", "l0"), record(1, "a", "l1")]);
    await tick();
    await finish("0");
    await first;
    // Tenant a has nothing in flight; its new event still goes after its deferred one, b's runs.
    const second = pumpBatch("in", [record(2, "a", "l2"), record(3, "b", "l3")]);
    await tick();
    expect(ran).toEqual(["0", "3"]);
    await finish("3");
    await second;
    expect(committed()).toEqual(["out:0", "retry:1", "retry:2", "out:3"]);
  });

  it("shares nothing with a share of 0: every event runs where it is", async () => {
    const { pumpBatch, finish, ran, committed } = setup({ perTenant: 0 });
    const pumped = pumpBatch("in", [record(0, "a", "l0"), record(1, "a", "l1"), record(2, "b", "l2")]);
    await tick();
    expect(ran).toEqual(["0", "1", "2"]);
    for (const offset of ["0", "1", "2"]) await finish(offset);
    await pumped;
    expect(committed()).toEqual(["out:0", "out:1", "out:2"]);
  });
});
