import { describe, expect, it } from "vitest";
import { filesMatching, sources } from "../../support/source-files.js";

/**
 * TLS, SASL and credentials are applied where a connection is built; a client built anywhere else
 * would silently connect without them. So each kind is built in one module only, and every pg
 * Pool or Client takes its settings from pgClientConfig.
 */
describe("connections are built in one place per kind", () => {
  it("every kafkajs client comes from createKafka", () => {
    expect(filesMatching(/new Kafka\(/)).toEqual(["adapters/kafka/kafka-client.ts"]);
  });

  it("every Redis client comes from createRedisClient", () => {
    expect(filesMatching(/new (Redis|Cluster)\(/)).toEqual(["adapters/redis/redis-connection.ts"]);
  });

  it("every pg Pool and Client takes pgClientConfig, never a bare connection string", () => {
    expect(filesMatching(/connectionString/)).toEqual([]);
    const builders = sources.flatMap((s) =>
      [...s.text.matchAll(/new pg\.(Pool|Client)\(([^;]*)/g)].map((m) => ({
        file: s.file,
        args: m[2] ?? "",
      })),
    );
    expect(builders.length).toBeGreaterThan(0);
    for (const { file, args } of builders) expect(args, file).toContain("pgClientConfig(");
  });

  it("the schema registry client is built by the value codec only", () => {
    expect(filesMatching(/new SchemaRegistry\(/)).toEqual(["adapters/schema-registry/value-codec.ts"]);
  });
});
