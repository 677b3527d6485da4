import { describe, expect, it } from "vitest";
import {
  formatLagTable,
  lagRows,
  pendingMessages,
  type LagSnapshot,
} from "../../../../../src/adapters/kafka/admin/consumer-lag.js";
import { estimateLagSeconds } from "../../../../../src/adapters/kafka/admin/lag-seconds.js";
import {
  replayCountHeader,
  replayedFromHeader,
  replayHeaders,
} from "../../../../../src/adapters/kafka/admin/dlq-replay.js";

const snapshot: LagSnapshot = {
  group: "reflector",
  topics: [
    {
      topic: "tasks",
      partitions: [
        { partition: 1, low: 5, high: 40 },
        { partition: 0, low: 0, high: 10 },
      ],
    },
  ],
  committed: new Map([["tasks:0", 7]]),
  owners: new Map([["tasks:0", { memberId: "m-1", clientId: "reflector", host: "/10.0.0.1" }]]),
};

describe("lag rows", () => {
  it("is log end − committed, and '-' (null) where nothing is committed, as kafka-consumer-groups shows", () => {
    const rows = lagRows(snapshot, { fromBeginning: true });
    expect(rows.map((r) => [r.partition, r.currentOffset, r.logEndOffset, r.lag])).toEqual([
      [0, 7, 10, 3],
      [1, null, 40, null],
    ]);
    expect(rows[0]).toMatchObject({ memberId: "m-1", clientId: "reflector", host: "/10.0.0.1" });
    expect(rows[1]).toMatchObject({ memberId: null, clientId: null, host: null });
  });

  it("counts what a group without a commit still has to read by its reset policy", () => {
    expect(pendingMessages(null, { partition: 1, low: 5, high: 40 }, true)).toBe(35);
    expect(pendingMessages(null, { partition: 1, low: 5, high: 40 }, false)).toBe(0);
    expect(pendingMessages(12, { partition: 1, low: 5, high: 40 }, false)).toBe(28);
  });

  it("prints the tool's columns plus LAG-SECONDS, '-' for missing values", () => {
    const rows = lagRows(snapshot, { fromBeginning: true }).map((r, i) => ({
      ...r,
      lagSeconds: i === 0 ? 12.34 : null,
    }));
    const lines = formatLagTable(rows).split("\n");
    expect(lines[0]?.split(/\s+/)).toEqual([
      "GROUP",
      "TOPIC",
      "PARTITION",
      "CURRENT-OFFSET",
      "LOG-END-OFFSET",
      "LAG",
      "LAG-SECONDS",
      "CONSUMER-ID",
      "HOST",
      "CLIENT-ID",
    ]);
    expect(lines[1]?.split(/\s+/)).toEqual([
      "reflector",
      "tasks",
      "0",
      "7",
      "10",
      "3",
      "12.3",
      "m-1",
      "/10.0.0.1",
      "reflector",
    ]);
    expect(lines[2]?.split(/\s+/)).toEqual(["reflector", "tasks", "1", "-", "40", "-", "-", "-", "-", "-"]);
  });
});

describe("lag in seconds from the broker's time index", () => {
  const now = 1_000_000_000;
  // 10 messages a second for the last 100 s: offset 0 at now − 100 s, offset 1000 now.
  const probes = [1, 2, 5, 10, 30, 60, 120].map((age) => ({
    timeMs: now - age * 1000,
    offset: Math.max(0, 1000 - age * 10),
  }));

  it("is 0 when caught up", () => {
    expect(estimateLagSeconds(1000, 1000, probes, now)).toBe(0);
  });

  it("interpolates the append time of the message at the committed offset", () => {
    // Offset 800 was appended when the log end passed 801, 19.9 s ago: between the 30 s and 10 s probes.
    expect(estimateLagSeconds(800, 1000, probes, now)).toBeCloseTo(19.9, 5);
    // Offset 995: between the 1 s probe (990) and the log end now (1000).
    expect(estimateLagSeconds(995, 1000, probes, now)).toBeCloseTo(0.4, 5);
    // At a probe's offset exactly, the message came after that probe, not at it.
    expect(estimateLagSeconds(700, 1000, probes, now)).toBeCloseTo(29.9, 5);
  });

  it("grows while the consumer is stalled and nothing new arrives", () => {
    // Production stopped 50 s ago at offset 500; the consumer sits at 400.
    const quiet = [1, 2, 5, 10, 30, 60, 120].map((age) => ({
      timeMs: now - age * 1000,
      offset: age >= 100 ? 0 : age >= 50 ? Math.round((100 - age) * 10) : 500,
    }));
    const early = estimateLagSeconds(400, 500, quiet, now) ?? 0;
    const later = estimateLagSeconds(400, 500, quiet, now + 30_000);
    expect(early).toBeGreaterThan(50);
    expect(later).toBeCloseTo(early + 30, 5);
  });

  it("reports the oldest probe's age as a lower bound when the message is older than the ladder", () => {
    expect(
      estimateLagSeconds(
        0,
        1000,
        probes.map((p) => ({ ...p, offset: p.offset + 5 })),
        now,
      ),
    ).toBe(120);
  });

  it("is unknown without probes", () => {
    expect(estimateLagSeconds(1, 5, [], now)).toBeNull();
  });
});

describe("DLQ replay headers", () => {
  it("keeps CloudEvents and trace headers, drops the dead-letter diagnosis, records the replay", () => {
    const headers = replayHeaders(
      {
        ce_id: "evt-1",
        ce_type: "agent.task.completed",
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "reflector.error.code": "SCHEMA_INVALID",
        "reflector.error.message": "task: Required",
        "reflector.original.topic": "agent.task.completed",
        "reflector.original.partition": "2",
        "reflector.original.offset": "41",
        "reflector.consumer.group": "reflector",
        "reflector.failed.at": "2026-11-23T10:00:00.000Z",
        "reflector.retry.count": "1",
        [replayCountHeader]: "1",
      },
      3,
      "17",
    );
    expect(headers).toEqual({
      ce_id: "evt-1",
      ce_type: "agent.task.completed",
      traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      [replayedFromHeader]: "dlq:3:17",
      [replayCountHeader]: "2",
    });
  });

  it("starts the count at 1", () => {
    expect(replayHeaders(undefined, 0, "0")).toEqual({
      [replayedFromHeader]: "dlq:0:0",
      [replayCountHeader]: "1",
    });
  });
});
