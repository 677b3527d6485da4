import { describe, expect, it } from "vitest";
import type { KafkaMessage, Message } from "kafkajs";
import {
  deferredMessage,
  isRetryRound,
  retryCountHeader,
  retryMessage,
  retryNotBeforeHeader,
} from "../../../../src/adapters/kafka/failure-records.js";
import { PartitionScheduler } from "../../../../src/adapters/kafka/ordered-scheduler.js";
import { DeferredFamilies, TenantShare } from "../../../../src/adapters/kafka/tenant-share.js";

describe("TenantShare", () => {
  it("holds a tenant at its share and frees it as its events end, apart from the others", () => {
    const share = new TenantShare(2);
    share.started("a");
    expect(share.atShare("a")).toBe(false);
    share.started("a");
    expect(share.atShare("a")).toBe(true);
    expect(share.atShare("b")).toBe(false);
    share.finished("a");
    expect(share.atShare("a")).toBe(false);
    expect(share.inFlight("a")).toBe(1);
    share.finished("a");
    expect(() => {
      share.finished("a");
    }).toThrow("finished without started");
  });

  it("shares nothing with a limit of 0, and never holds an event of no known tenant", () => {
    const none = new TenantShare(0);
    for (let i = 0; i < 1000; i += 1) none.started("a");
    expect(none.atShare("a")).toBe(false);
    const one = new TenantShare(1);
    one.started(null);
    expect(one.atShare(null)).toBe(false);
    expect(() => new TenantShare(-1)).toThrow(RangeError);
  });
});

describe("DeferredFamilies", () => {
  it("remembers the most recent families up to its capacity", () => {
    const families = new DeferredFamilies(2);
    families.add("f1");
    families.add("f2");
    families.add("f1"); // f1 is now the most recent
    families.add("f3");
    expect(families.has("f1")).toBe(true);
    expect(families.has("f2")).toBe(false);
    expect(families.has("f3")).toBe(true);
  });
});

describe("PartitionScheduler.settle", () => {
  it("settles ready entries without running them, past the limit, and offers each key's next in turn", () => {
    const s = new PartitionScheduler<string, string>(1);
    s.add("0", "a", "a0");
    s.add("1", "b", "b0");
    s.add("2", "a", "a1");
    s.add("3", "a", "a2");
    s.add("4", null, "n");
    expect(s.next()?.offset).toBe("0"); // the one slot of the partition is taken
    // Settles every b and every a but the running one; a's next ones follow once a0 completes.
    expect(s.settle((item) => (item.startsWith("b") || item === "n" ? `deferred ${item}` : undefined))).toBe(
      2,
    );
    expect(s.inFlight).toBe(1);
    s.complete("0", "ran a0");
    expect(s.settle((item) => (item.startsWith("a") ? `deferred ${item}` : undefined))).toBe(2);
    expect(s.pending).toBe(5);
    const prefix = s.committable();
    expect(prefix?.nextOffset).toBe("5");
    expect(prefix?.entries.map((e) => e.result)).toEqual([
      "ran a0",
      "deferred b0",
      "deferred a1",
      "deferred a2",
      "deferred n",
    ]);
  });

  it("leaves the entries it gives no result for, in their order", () => {
    const s = new PartitionScheduler<string, string>(4);
    s.add("0", "a", "a0");
    s.add("1", "a", "a1");
    expect(s.settle(() => undefined)).toBe(0);
    expect(s.next()?.offset).toBe("0");
    expect(s.next()).toBeNull();
  });
});

describe("a record deferred for its tenant's share", () => {
  const message = {
    key: Buffer.from("loop-1"),
    value: Buffer.from("{}"),
    headers: { traceparent: "00-abc", "reflector.retry.count": "7" },
    offset: "41",
    timestamp: "0",
    attributes: 0,
  } as KafkaMessage;
  const source = { topic: "in", partition: 3, message };
  const now = new Date(1_700_000_000_000);
  const fits = () => true;
  const header = (m: Message | null, name: string) => m?.headers?.[name]?.toString();

  it("carries the record, where it was read and a retry count of 0, due at once", () => {
    const deferred = deferredMessage(source, { groupId: "g", retryTopic: "retry", now }, fits);
    expect(deferred?.key?.toString()).toBe("loop-1");
    expect(deferred?.value?.toString()).toBe("{}");
    expect(header(deferred, "traceparent")).toBe("00-abc");
    expect(header(deferred, "reflector.original.topic")).toBe("in");
    expect(header(deferred, "reflector.original.partition")).toBe("3");
    expect(header(deferred, "reflector.original.offset")).toBe("41");
    // The producer's own reflector.* header is not kept: the count is Reflector's.
    expect(header(deferred, retryCountHeader)).toBe("0");
    expect(header(deferred, retryNotBeforeHeader)).toBe(String(now.getTime()));
    expect(header(deferred, "reflector.error.code")).toBeUndefined();
    expect(deferredMessage(source, { groupId: "g", retryTopic: "retry", now }, () => false)).toBeNull();
  });

  it("is not in its last round on the retry topic; a failed record is", () => {
    const deferred = deferredMessage(source, { groupId: "g", retryTopic: "retry", now }, fits);
    const failed = retryMessage(
      source,
      { groupId: "g", code: "GENERATOR_FAILED", reason: "x", now, retryTopic: "retry" },
      now.getTime(),
      fits,
    );
    const read = (m: Message | null) => ({
      topic: "retry",
      partition: 0,
      message: { ...message, headers: m?.headers ?? {} } as KafkaMessage,
    });
    expect(isRetryRound(read(deferred), "retry")).toBe(false);
    expect(isRetryRound(read(failed), "retry")).toBe(true);
    expect(isRetryRound({ ...read(failed), topic: "in" }, "retry")).toBe(false);
  });
});

describe("TenantShare: a tenant being deferred", () => {
  it("is deferring for the window after its last deferral, and never with no share", () => {
    const share = new TenantShare(2, 1_000);
    expect(share.deferring("a", 0)).toBe(false);
    share.deferred("a", 10);
    expect(share.deferring("a", 500)).toBe(true);
    expect(share.deferring("b", 500)).toBe(false);
    expect(share.deferring("a", 1_010)).toBe(false);
    const none = new TenantShare(0, 1_000);
    none.deferred("a", 10);
    expect(none.deferring("a", 20)).toBe(false);
  });
});
