import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, envVariableNames, loadConfig } from "../../../src/config/config.js";

describe("config", () => {
  it("has local defaults for every setting", () => {
    const config = loadConfig({});
    expect(config.kafka).toEqual({
      brokers: ["127.0.0.1:9092"],
      clientId: "reflector",
      groupId: "reflector",
      fromBeginning: true,
      ssl: false,
      sasl: undefined,
    });
    expect(config.topics.taskCompleted).toBe("agent.task.completed");
    expect(config.topics.deadLetter).toBe("agent.task.completed.dlq");
    expect(config.generator).toBe("heuristic");
    expect(config.quality.storageMinQuality).toBe(0.8);
    expect(Object.isFrozen(config.kafka)).toBe(true);
  });

  it("parses lists and numbers, treating empty variables as unset", () => {
    const config = loadConfig({
      KAFKA_BROKERS: "a:9092, b:9093",
      HTTP_PORT: "9000",
      SCHEMA_REGISTRY_URL: "",
    });
    expect(config.kafka.brokers).toEqual(["a:9092", "b:9093"]);
    expect(config.http.port).toBe(9000);
    expect(config.schemaRegistryUrl).toBeUndefined();
  });

  it("takes the consumer's hand-over time and uncommitted window per partition, refusing an empty window", () => {
    expect(loadConfig({}).consumer).toMatchObject({
      handOverAfterMs: 2_000,
      maxHeldPerPartition: 1_000,
      maxHeldBytesPerPartition: 4 * 1024 * 1024,
    });
    const config = loadConfig({
      CONSUMER_HAND_OVER_AFTER_MS: "0",
      CONSUMER_MAX_HELD_PER_PARTITION: "200",
      CONSUMER_MAX_HELD_BYTES_PER_PARTITION: "1048576",
    });
    expect(config.consumer).toMatchObject({
      handOverAfterMs: 0,
      maxHeldPerPartition: 200,
      maxHeldBytesPerPartition: 1_048_576,
    });
    expect(() => loadConfig({ CONSUMER_MAX_HELD_PER_PARTITION: "0" })).toThrow(
      /CONSUMER_MAX_HELD_PER_PARTITION/,
    );
  });

  it("lists every problem at once", () => {
    let error: unknown;
    try {
      loadConfig({
        KAFKA_BROKERS: "no-port",
        HTTP_PORT: "99999",
        DATABASE_URL: "mysql://x",
        TOPIC_DLQ: "bad topic!",
        REFLECTOR_MODE: "turbo",
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toHaveLength(5);
    expect(problems.join("\n")).toMatch(/KAFKA_BROKERS.*host:port/);
    expect(problems.join("\n")).toMatch(/HTTP_PORT/);
    expect(problems.join("\n")).toMatch(/DATABASE_URL.*postgres/);
    expect(problems.join("\n")).toMatch(/TOPIC_DLQ/);
    expect(problems.join("\n")).toMatch(/REFLECTOR_MODE/);
  });

  it("enables the offline generator's domain packs by name, and lists an unknown one as a problem", () => {
    expect(loadConfig({}).heuristicPacks).toEqual([]);
    expect(loadConfig({ REFLECTOR_HEURISTIC_PACKS: " travel " }).heuristicPacks).toEqual(["travel"]);
    expect(() => loadConfig({ REFLECTOR_HEURISTIC_PACKS: "travel,cooking" })).toThrow(
      /REFLECTOR_HEURISTIC_PACKS/,
    );
  });

  it("parses API_KEYS once, at start-up, into each key's tenant and roles", () => {
    const keys = loadConfig({ API_KEYS: "reader-key-1:tenant-a, voter-key-1:tenant-b:read+vote" }).http
      .apiKeys;
    expect([...keys.keys()]).toEqual(["reader-key-1", "voter-key-1"]);
    expect(keys.get("reader-key-1")).toEqual({ tenant: "tenant-a", roles: new Set(["read"]) });
    expect(keys.get("voter-key-1")).toEqual({ tenant: "tenant-b", roles: new Set(["read", "vote"]) });
    expect(loadConfig({}).http.apiKeys.size).toBe(0);
  });

  it("docs/configuration.md documents every variable", () => {
    const readme = readFileSync(new URL("../../../docs/configuration.md", import.meta.url), "utf8");
    const missing = envVariableNames.filter((name) => !readme.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
