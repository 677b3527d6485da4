import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { sources } from "../../support/source-files.js";

/** Every metric name the code registers (a `reflector_…` literal in src/), and the operations guide. */
const registered = [
  ...new Set(
    sources.flatMap((s) => [...s.text.matchAll(/"(reflector_[a-z0-9_]+)"/g)].map((m) => m[1] ?? "")),
  ),
].sort();
const guide = readFileSync(new URL("../../../docs/operations.md", import.meta.url), "utf8");
const metricsTable = new Set([...guide.matchAll(/^\| `(reflector_[a-z0-9_]+)`\s+\|/gm)].map((m) => m[1]));

describe("metrics", () => {
  it("are every one in the operations guide's metrics table", () => {
    expect(registered.length).toBeGreaterThan(40);
    expect(registered.filter((name) => !metricsTable.has(name))).toEqual([]);
  });

  it("are documented only when the code registers them", () => {
    expect([...metricsTable].filter((name) => name !== undefined && !registered.includes(name))).toEqual([]);
  });
});
