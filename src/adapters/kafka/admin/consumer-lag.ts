import { AssignerProtocol, type Admin } from "kafkajs";
import { estimateLagSeconds, probeAgesSeconds, type OffsetAtTime } from "./lag-seconds.js";

/** One row of `reflector lag`, the same columns `kafka-consumer-groups.sh --describe` prints. */
export interface LagRow {
  group: string;
  topic: string;
  partition: number;
  /** The group's committed offset; null when the group never committed on this partition ('-'). */
  currentOffset: number | null;
  /** The partition's high watermark (what Kafka's tool calls LOG-END-OFFSET). */
  logEndOffset: number;
  /** logEndOffset − currentOffset; null when nothing is committed, as Kafka's tool prints '-'. */
  lag: number | null;
  /** Messages a consumer of this group still has to read here (see `pendingMessages`). */
  pending: number;
  /** Estimated age in seconds of the oldest unconsumed message; null when it cannot be estimated. */
  lagSeconds: number | null;
  memberId: string | null;
  clientId: string | null;
  host: string | null;
}

export interface PartitionOffsets {
  partition: number;
  /** Log start offset. */
  low: number;
  /** High watermark. */
  high: number;
}

/**
 * A topic's log start and end per partition. The end must be the high watermark (ListOffsets at
 * READ_UNCOMMITTED) to agree with Kafka's tool; src/adapters/kafka/log-offsets.ts reads it so.
 */
export type LogOffsets = (topic: string) => Promise<PartitionOffsets[]>;

export interface LagSnapshot {
  group: string;
  /** Per topic, the offsets of every partition; the rows are derived from it. */
  topics: { topic: string; partitions: PartitionOffsets[] }[];
  /** `${topic}:${partition}` → committed offset (absent: none). */
  committed: Map<string, number>;
  /** `${topic}:${partition}` → the member it is assigned to right now. */
  owners: Map<string, { memberId: string; clientId: string; host: string }>;
}

const key = (topic: string, partition: number) => `${topic}:${String(partition)}`;

/**
 * What a consumer still has to read. With a committed offset, the lag. Without one, the group
 * starts where its reset policy says: the whole retained log with `fromBeginning`, nothing otherwise.
 */
export function pendingMessages(
  currentOffset: number | null,
  offsets: PartitionOffsets,
  fromBeginning: boolean,
): number {
  if (currentOffset !== null) return Math.max(0, offsets.high - currentOffset);
  return fromBeginning ? Math.max(0, offsets.high - offsets.low) : 0;
}

/** Pure: the snapshot as rows, ordered by topic then partition. */
export function lagRows(snapshot: LagSnapshot, options: { fromBeginning: boolean }): LagRow[] {
  const rows: LagRow[] = [];
  for (const { topic, partitions } of snapshot.topics) {
    for (const offsets of [...partitions].sort((a, b) => a.partition - b.partition)) {
      const k = key(topic, offsets.partition);
      const committed = snapshot.committed.get(k);
      const currentOffset = committed ?? null;
      const owner = snapshot.owners.get(k);
      rows.push({
        group: snapshot.group,
        topic,
        partition: offsets.partition,
        currentOffset,
        logEndOffset: offsets.high,
        // Kafka's tool: LAG = LOG-END-OFFSET − CURRENT-OFFSET, '-' when nothing is committed.
        lag: currentOffset === null ? null : offsets.high - currentOffset,
        pending: pendingMessages(currentOffset, offsets, options.fromBeginning),
        lagSeconds: null,
        memberId: owner?.memberId ?? null,
        clientId: owner?.clientId ?? null,
        host: owner?.host ?? null,
      });
    }
  }
  return rows;
}

/**
 * Reads offsets and membership the way `kafka-consumer-groups.sh --describe` does: committed
 * offsets from the group coordinator, the log end as the high watermark (ListOffsets at
 * READ_UNCOMMITTED, the Java tool's default — not the last stable offset, which kafkajs' admin
 * client would return), and the owner of each partition from the members' assignments.
 */
export async function readLagSnapshot(
  admin: Admin,
  logOffsets: LogOffsets,
  groupId: string,
  topics: string[],
): Promise<LagSnapshot> {
  const [offsetsByTopic, committedByTopic, groups] = await Promise.all([
    Promise.all(topics.map(async (topic) => ({ topic, offsets: await logOffsets(topic) }))),
    admin.fetchOffsets({ groupId, topics }),
    admin.describeGroups([groupId]),
  ]);
  const committed = new Map<string, number>();
  for (const { topic, partitions } of committedByTopic) {
    for (const { partition, offset } of partitions) {
      // kafkajs reports "no committed offset" as -1.
      const value = Number(offset);
      if (value >= 0) committed.set(key(topic, partition), value);
    }
  }
  const owners = new Map<string, { memberId: string; clientId: string; host: string }>();
  for (const group of groups.groups) {
    // Only a stable group's assignment is real; during a rebalance the tool shows no owner either.
    if (group.state !== "Stable") continue;
    for (const member of group.members) {
      const decoded = AssignerProtocol.MemberAssignment.decode(member.memberAssignment);
      if (!decoded) continue;
      for (const [topic, partitions] of Object.entries(decoded.assignment)) {
        for (const partition of partitions) {
          owners.set(key(topic, partition), {
            memberId: member.memberId,
            clientId: member.clientId,
            // kafkajs reports the host as the broker saw it, "/127.0.0.1"; the tool prints it so too.
            host: member.clientHost,
          });
        }
      }
    }
  }
  return {
    group: groupId,
    topics: offsetsByTopic.map(({ topic, offsets }) => ({
      topic,
      partitions: offsets,
    })),
    committed,
    owners,
  };
}

/** Where each partition's log stood at each age of the ladder (see `estimateLagSeconds`). */
async function probeTimeIndex(admin: Admin, topic: string, nowMs: number) {
  const byPartition = new Map<number, OffsetAtTime[]>();
  const answers = await Promise.all(
    probeAgesSeconds.map(async (age) => {
      const timeMs = nowMs - age * 1000;
      return { timeMs, offsets: await admin.fetchTopicOffsetsByTimestamp(topic, timeMs) };
    }),
  );
  for (const { timeMs, offsets } of answers) {
    for (const { partition, offset } of offsets) {
      byPartition.set(partition, [...(byPartition.get(partition) ?? []), { timeMs, offset: Number(offset) }]);
    }
  }
  return byPartition;
}

export interface ReadLagOptions {
  logOffsets: LogOffsets;
  groupId: string;
  topics: string[];
  /** The group's reset policy: where a partition without a committed offset starts. */
  fromBeginning: boolean;
  now?: () => number;
}

/** Rows for every partition of `topics`, with the lag in seconds of those that have pending messages. */
export async function readConsumerLag(admin: Admin, options: ReadLagOptions): Promise<LagRow[]> {
  const nowMs = (options.now ?? Date.now)();
  const snapshot = await readLagSnapshot(admin, options.logOffsets, options.groupId, options.topics);
  const rows = lagRows(snapshot, { fromBeginning: options.fromBeginning });
  const lagging = [...new Set(rows.filter((r) => r.pending > 0).map((r) => r.topic))];
  const probes = new Map(
    await Promise.all(
      lagging.map(async (topic) => [topic, await probeTimeIndex(admin, topic, nowMs)] as const),
    ),
  );
  const lows = new Map(
    snapshot.topics.flatMap(({ topic, partitions }) =>
      partitions.map((p) => [key(topic, p.partition), p.low]),
    ),
  );
  return rows.map((row) => {
    if (row.pending === 0) return { ...row, lagSeconds: 0 };
    const next = row.currentOffset ?? lows.get(key(row.topic, row.partition)) ?? 0;
    const points = probes.get(row.topic)?.get(row.partition) ?? [];
    return { ...row, lagSeconds: estimateLagSeconds(next, row.logEndOffset, points, nowMs) };
  });
}

const columns = [
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
] as const;

/** The table `reflector lag` prints: Kafka's columns, plus LAG-SECONDS; '-' where there is no value. */
export function formatLagTable(rows: LagRow[]): string {
  const dash = (value: string | number | null) => (value === null ? "-" : String(value));
  const cells = rows.map((row) => [
    row.group,
    row.topic,
    String(row.partition),
    dash(row.currentOffset),
    String(row.logEndOffset),
    dash(row.lag),
    dash(row.lagSeconds === null ? null : Math.round(row.lagSeconds * 10) / 10),
    dash(row.memberId),
    dash(row.host),
    dash(row.clientId),
  ]);
  const widths = columns.map((title, i) => Math.max(title.length, ...cells.map((c) => c[i]?.length ?? 0)));
  const line = (values: readonly string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join(" ")
      .trimEnd();
  return [line(columns), ...cells.map(line)].join("\n");
}
