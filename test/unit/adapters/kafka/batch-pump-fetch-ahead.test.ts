import { describe, expect, it } from "vitest";
import { record, setup } from "./batch-pump-fakes.js";

describe("the batch pump: fetching past a partition's uncommitted events", () => {
  it("has the next fetch begin at the last record held, not at the last committed, so records behind a running event are fetched", async () => {
    const { pumpBatch, ran, resolved, committed } = setup({ perTenant: 0, roundMs: 0 });
    // 2 is of the loop of 1: it waits for it.
    await pumpBatch("in", [record(0, "a", "l0"), record(1, "b", "l1"), record(2, "b", "l1")]);
    expect(ran).toEqual(["0", "1"]);
    // Nothing is committed, yet the next fetch begins at 2 (the last held, fetched again so that
    // the partition's batches go on while it holds uncommitted records), not at 0.
    expect(committed()).toEqual([]);
    expect(resolved).toEqual(["1"]);
    await pumpBatch("in", [record(2, "b", "l1"), record(3, "c", "l3")]);
    expect(ran).toEqual(["0", "1", "3"]);
    expect(resolved).toEqual(["1", "2"]);
  });

  it("fetches after the last record once all are committed (nothing is fetched again)", async () => {
    const { pumpBatch, finish, resolved, committed } = setup({ perTenant: 0, roundMs: 0 });
    await pumpBatch("in", [record(0, "a", "l0"), record(1, "b", "l1")]);
    await finish("0");
    await finish("1");
    await pumpBatch("in", [record(1, "b", "l1")]);
    expect(committed()).toEqual(["out:0", "out:1"]);
    expect(resolved).toEqual(["0", "1"]);
  });

  it("holds at most its window of uncommitted records: the rest are fetched again later", async () => {
    const { pumpBatch, finish, ran, committed } = setup({ perTenant: 0, roundMs: 0, maxHeldPerPartition: 2 });
    await pumpBatch("in", [record(0, "a", "l0"), record(1, "b", "l1"), record(2, "c", "l2")]);
    expect(ran).toEqual(["0", "1"]);
    await finish("0");
    await finish("1");
    // The next fetch finds the window full, and commits what is done; the one after holds 2.
    await pumpBatch("in", [record(1, "b", "l1"), record(2, "c", "l2")]);
    expect(ran).toEqual(["0", "1"]);
    expect(committed()).toEqual(["out:0", "out:1"]);
    await pumpBatch("in", [record(2, "c", "l2")]);
    expect(ran).toEqual(["0", "1", "2"]);
  });

  it("holds at most its window's bytes of uncommitted records, and always one", async () => {
    // Each record's value is 30 bytes: a window of 50 bytes holds two, one of 1 byte one.
    const { pumpBatch, finish, ran } = setup({ perTenant: 0, roundMs: 0, maxHeldBytesPerPartition: 50 });
    await pumpBatch("in", [record(0, "a", "l0"), record(1, "b", "l1"), record(2, "c", "l2")]);
    expect(ran).toEqual(["0", "1"]);
    await finish("0");
    await finish("1");
    // Committed, they free the window: 2 is held on the fetch after.
    await pumpBatch("in", [record(1, "b", "l1"), record(2, "c", "l2")]);
    await pumpBatch("in", [record(2, "c", "l2")]);
    expect(ran).toEqual(["0", "1", "2"]);
    const one = setup({ perTenant: 0, roundMs: 0, maxHeldBytesPerPartition: 1 });
    await one.pumpBatch("in", [record(0, "a", "l0"), record(1, "b", "l1")]);
    expect(one.ran).toEqual(["0"]);
  });

  it("does not take a fetch that begins on a transaction marker's offset for another member's commit", async () => {
    const { pumpBatch, finish, ran, committed } = setup({ perTenant: 0, roundMs: 0 });
    await pumpBatch("retry", [record(0, "a", "l0"), record(1, "a", "l1")]);
    // Fetched from 2, the offset of a commit marker: the first record is 3. 0 and 1 are still ours.
    await pumpBatch("retry", [record(3, "b", "l3")], "2");
    expect(ran).toEqual(["0", "1", "3"]);
    for (const offset of ["0", "1", "3"]) await finish(offset);
    await pumpBatch("retry", [record(4, "b", "l4")]);
    expect(committed()).toEqual(["out:0", "out:1", "out:3"]);
  });

  it("fetches again from the last commit a partition it gave up without a rebalance", async () => {
    const { pumpBatch, finish, ran, resolved, pump, committed } = setup({ perTenant: 0, roundMs: 0 });
    await pumpBatch("in", [record(0, "a", "l0"), record(1, "b", "l1"), record(2, "b", "l2")]);
    expect(resolved).toEqual(["1"]);
    // A batch of the partition fails its heartbeat (not a rebalance): its run is given up.
    await pump.eachBatch({
      batch: { topic: "in", partition: 0, messages: [record(2, "b", "l2")], fetchedOffset: "2" },
      resolveOffset: (offset: string) => resolved.push(offset),
      heartbeat: () => Promise.reject(new Error("broker went away")),
      isRunning: () => true,
      isStale: () => true,
    } as never);
    // The next fetch, from where the run had got to, is not taken: the position goes back to 0.
    await pumpBatch("in", [record(2, "b", "l2")]);
    expect(resolved).toEqual(["1", "-1"]);
    // The runs given up end; nothing of theirs is committed.
    for (const offset of ["0", "1", "2"]) await finish(offset);
    await pumpBatch("in", [record(0, "a", "l0"), record(1, "b", "l1"), record(2, "b", "l2")]);
    expect(ran).toEqual(["0", "1", "2", "0", "1", "2"]);
    expect(committed()).toEqual([]);
  });
});
