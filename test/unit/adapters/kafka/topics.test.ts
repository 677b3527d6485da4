import type { Kafka } from "kafkajs";
import { describe, expect, it } from "vitest";
import { ensureTopics } from "../../../../src/adapters/kafka/topics.js";

const unknownTopic = () =>
  Object.assign(new Error("This server does not host this topic-partition"), {
    type: "UNKNOWN_TOPIC_OR_PARTITION",
  });

/** An admin client whose topic metadata is unknown for the first `lag` asks after a create. */
function fakeKafka(existing: string[], lag: number, createError?: Error) {
  const calls = { created: [] as string[], metadataAsks: 0 };
  const admin = {
    connect: () => Promise.resolve(),
    disconnect: () => Promise.resolve(),
    listTopics: () => Promise.resolve(existing),
    createTopics: ({ topics }: { topics: { topic: string }[] }) => {
      calls.created.push(...topics.map((t) => t.topic));
      return createError ? Promise.reject(createError) : Promise.resolve(true);
    },
    fetchTopicMetadata: () => {
      calls.metadataAsks += 1;
      return calls.metadataAsks <= lag ? Promise.reject(unknownTopic()) : Promise.resolve({ topics: [] });
    },
  };
  return { kafka: { admin: () => admin } as unknown as Kafka, calls };
}

const plan = { names: ["a.in", "a.out"], partitions: 3, replicationFactor: 1 };

describe("ensureTopics", () => {
  it("creates what is missing and leaves what exists", async () => {
    const { kafka, calls } = fakeKafka(["a.in"], 0);
    await expect(ensureTopics(kafka, plan)).resolves.toEqual({ created: ["a.out"], existing: ["a.in"] });
    expect(calls.created).toEqual(["a.out"]);
  });

  it("waits for a new topic's metadata when the broker does not know it yet (a broker just started)", async () => {
    const { kafka, calls } = fakeKafka([], 3, unknownTopic());
    await expect(ensureTopics(kafka, plan)).resolves.toEqual({ created: ["a.in", "a.out"], existing: [] });
    expect(calls.metadataAsks).toBe(4);
  });

  it("gives any other failure of the create to the caller", async () => {
    const { kafka } = fakeKafka([], 0, new Error("not authorized"));
    await expect(ensureTopics(kafka, plan)).rejects.toThrow("not authorized");
  });
});
