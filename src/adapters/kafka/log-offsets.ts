import type { Kafka } from "kafkajs";

export interface PartitionOffsets {
  partition: number;
  /** Log start offset. */
  low: number;
  /** High watermark: the log end as `kafka-consumer-groups.sh --describe` reports it. */
  high: number;
}

/** The slice of kafkajs' internal Cluster this module uses (kafkajs 2.2.4, which no longer changes). */
interface KafkajsCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadataIfNecessary(): Promise<void>;
  findTopicPartitionMetadata(topic: string): { partitionId: number }[];
  fetchTopicsOffset(
    topics: { topic: string; partitions: { partition: number }[]; fromBeginning: boolean }[],
  ): Promise<{ topic: string; partitions: { partition: number; offset: string }[] }[]>;
}

const READ_UNCOMMITTED = 0;

/**
 * Log start and log end offsets per partition, with ListOffsets at READ_UNCOMMITTED: the high
 * watermark, which is what Kafka's consumer-group tool shows (its ListOffsetsOptions default).
 * kafkajs' admin client asks at READ_COMMITTED instead and gets the last stable offset, which lags
 * the tool by the records of open transactions (test/integration/lag.test.ts shows both). kafkajs
 * has no public option for it, so this builds a cluster client with the isolation level through
 * the factory every kafkajs client uses; kafkajs is unmaintained and frozen, which keeps that stable.
 */
export function createLogOffsetsReader(kafka: Kafka) {
  const factory = Object.getOwnPropertySymbols(kafka).find(
    (s) => s.description === "private:Kafka:createCluster",
  );
  const create = factory ? (kafka as unknown as Record<symbol, unknown>)[factory] : undefined;
  if (typeof create !== "function") {
    throw new Error("this kafkajs version has no cluster factory: cannot read high watermarks");
  }
  const cluster = (create as (options: object) => KafkajsCluster)({
    isolationLevel: READ_UNCOMMITTED,
    allowAutoTopicCreation: false,
  });
  let connected: Promise<void> | null = null;

  async function fetch(topic: string, fromBeginning: boolean) {
    const partitions = cluster.findTopicPartitionMetadata(topic).map((p) => ({ partition: p.partitionId }));
    const [answer] = await cluster.fetchTopicsOffset([{ topic, partitions, fromBeginning }]);
    return new Map((answer?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
  }

  return {
    async offsets(topic: string): Promise<PartitionOffsets[]> {
      connected ??= cluster.connect().catch((err: unknown) => {
        connected = null;
        throw err;
      });
      await connected;
      await cluster.addTargetTopic(topic);
      await cluster.refreshMetadataIfNecessary();
      const [low, high] = await Promise.all([fetch(topic, true), fetch(topic, false)]);
      return [...high].map(([partition, end]) => ({ partition, low: low.get(partition) ?? 0, high: end }));
    },
    async close(): Promise<void> {
      if (connected) await cluster.disconnect().catch(() => undefined);
      connected = null;
    },
  };
}

export type LogOffsetsReader = ReturnType<typeof createLogOffsetsReader>;
