import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../../src/config/config.js";

/** The example environment a new operator copies: every name a real setting, every value valid. */
const text = readFileSync(new URL("../../../.env.example", import.meta.url), "utf8");
const documented = new Set(
  [
    ...readFileSync(new URL("../../../docs/configuration.md", import.meta.url), "utf8").matchAll(
      /^\| `([A-Z0-9_]+)`/gm,
    ),
  ].map((m) => m[1]),
);
const entries = (commented: boolean) =>
  text
    .split("\n")
    .map((line) => (commented ? line.replace(/^#\s*(?=[A-Z0-9_]+=)/, "") : line))
    .map((line) => /^([A-Z0-9_]+)=(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => [m[1] ?? "", m[2] ?? ""] as const);

describe(".env.example", () => {
  it("names only settings the configuration documents, the commented ones too", () => {
    const names = entries(true).map(([name]) => name);
    expect(names.length).toBeGreaterThan(5);
    expect(names.filter((name) => !documented.has(name))).toEqual([]);
  });

  it("is a configuration the processor starts with", () => {
    const config = loadConfig(Object.fromEntries(entries(false)));
    expect(config.kafka.brokers).toEqual(["127.0.0.1:9092"]);
    expect(config.generator).toBe("heuristic");
  });
});
