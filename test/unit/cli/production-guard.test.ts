import { describe, expect, it } from "vitest";
import { demoTargetProblem } from "../../../src/cli/production-guard.js";

describe("reflector demo's guard against production", () => {
  it("runs against this machine's services, or the ones it starts itself", () => {
    expect(demoTargetProblem({})).toBeNull();
    expect(
      demoTargetProblem({
        KAFKA_BROKERS: "127.0.0.1:9092,localhost:9093",
        DATABASE_URL: "postgres://postgres@127.0.0.1:5432/reflector",
        REDIS_URL: "redis://[::1]:6379",
        SCHEMA_REGISTRY_URL: "http://localhost:8081/apis/ccompat/v7",
      }),
    ).toBeNull();
  });

  it("refuses brokers, a database or a registry elsewhere, naming which", () => {
    const problem = demoTargetProblem({
      KAFKA_BROKERS: "127.0.0.1:9092,kafka-prod-1.internal:9094",
      DATABASE_URL: "postgres://reflector:secret@db.prod.internal:5432/reflector",
    });
    expect(problem).toMatch(/KAFKA_BROKERS \(kafka-prod-1\.internal\)/);
    expect(problem).toMatch(/DATABASE_URL \(db\.prod\.internal\)/);
    expect(problem).not.toContain("secret");
    expect(problem).toMatch(/--allow-remote/);
  });

  it("refuses where the environment says production, whatever the addresses", () => {
    expect(demoTargetProblem({ REFLECTOR_ENV: "production", KAFKA_BROKERS: "127.0.0.1:9092" })).toMatch(
      /REFLECTOR_ENV=production/,
    );
    expect(demoTargetProblem({ NODE_ENV: "Production" })).toMatch(/NODE_ENV=production/);
  });
});
