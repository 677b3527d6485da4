import type { Kafka } from "kafkajs";
import pRetry from "p-retry";

export interface TopicPlan {
  names: string[];
  partitions: number;
  replicationFactor: number;
}

/** Creates the topics Reflector reads and writes; existing ones are left as they are. */
export async function ensureTopics(
  kafka: Kafka,
  plan: TopicPlan,
): Promise<{ created: string[]; existing: string[] }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const present = new Set(await admin.listTopics());
    const missing = plan.names.filter((name) => !present.has(name));
    if (missing.length > 0) {
      await admin
        .createTopics({
          waitForLeaders: true,
          topics: missing.map((topic) => ({
            topic,
            numPartitions: plan.partitions,
            replicationFactor: plan.replicationFactor,
          })),
        })
        .catch((err: unknown) => {
          if (!isUnknownTopic(err)) throw err;
        });
      // On a broker that has just started, a new topic's metadata can lag its creation, and the
      // client's wait for leaders gives up on "unknown topic" instead of waiting: wait here, bounded.
      await pRetry(() => admin.fetchTopicMetadata({ topics: missing }), {
        retries: 30,
        minTimeout: 100,
        maxTimeout: 1_000,
        shouldRetry: ({ error }) => isUnknownTopic(error),
      });
    }
    return { created: missing, existing: plan.names.filter((name) => present.has(name)) };
  } finally {
    await admin.disconnect();
  }
}

function isUnknownTopic(err: unknown): boolean {
  return (err as { type?: unknown } | null)?.type === "UNKNOWN_TOPIC_OR_PARTITION";
}
