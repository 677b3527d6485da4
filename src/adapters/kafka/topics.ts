import type { Kafka } from "kafkajs";

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
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: plan.partitions,
          replicationFactor: plan.replicationFactor,
        })),
      });
    }
    return { created: missing, existing: plan.names.filter((name) => present.has(name)) };
  } finally {
    await admin.disconnect();
  }
}
