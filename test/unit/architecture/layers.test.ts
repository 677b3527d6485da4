import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The layering docs/architecture.md describes, checked on every import in src/ (import cycles are
 * checked by `npm run cycles`). A layer is a top folder of src/, or `adapters/<name>`.
 */
const root = fileURLToPath(new URL("../../../src/", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

function layerOf(path: string): string {
  const parts = relative(root, path).split("/");
  if (parts[0] === "adapters") return `adapters/${parts[1] ?? ""}`;
  return (parts.length === 1 ? parts[0]?.replace(/\.(ts|js)$/, "") : parts[0]) ?? "";
}

/** Every import of src/ as `file → layer` (or `package:<name>` for a package). */
const imports = sourceFiles(root).flatMap((file) => {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gms)].map((m) => {
    const spec = m[1] ?? "";
    const to = spec.startsWith(".")
      ? layerOf(resolve(dirname(file), spec))
      : `package:${spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : (spec.split("/")[0] ?? "")}`;
    return { file: relative(root, file), from: layerOf(file), to };
  });
});

/**
 * Imports that break the rules below and are known; each is a debt to pay, not a pattern to copy.
 * A new one fails the test; one paid off must be removed here (the test fails on stale entries).
 */
const knownExceptions = new Set([
  // A second composition root: maintenance builds its own store and evictor.
  "maintenance/wire-maintenance.ts -> adapters/postgres",
  "maintenance/wire-maintenance.ts -> adapters/redis",
  // The read side has no port yet: routes take the Postgres store's type.
  "http/api-routes.ts -> adapters/postgres",
  // The LLM factory builds the embedders; the OpenAI embedder shares the LLM call policy.
  "adapters/llm/llm-adapters.ts -> adapters/embedding",
  "adapters/embedding/openai-embedder.ts -> adapters/llm",
  // The value codec's type is not a port yet.
  "adapters/kafka/event-runner.ts -> adapters/schema-registry",
  "adapters/kafka/feedback-consumer.ts -> adapters/schema-registry",
  "adapters/kafka/output-publisher.ts -> adapters/schema-registry",
]);

function violates(from: string, to: string): string | null {
  if (from === to) return null;
  if (from === "domain" && !["package:zod", "package:node:crypto"].includes(to))
    return "the domain imports only zod, node:crypto and itself";
  if (from === "pipeline" && to !== "domain" && !to.startsWith("package:"))
    return "the pipeline imports only the domain";
  if (from.startsWith("adapters/") && to.startsWith("adapters/"))
    return "an adapter never imports another adapter";
  if (from.startsWith("adapters/") && ["app", "main", "cli", "http", "ops", "config"].includes(to))
    return "adapters import the domain, ports and observability only";
  if (
    ["http", "maintenance", "pipeline", "domain", "observability", "ops", "config"].includes(from) &&
    to.startsWith("adapters/")
  )
    return "only app.ts and the CLI build adapters";
  if ((to === "app" || to === "main") && !["main", "cli"].includes(from))
    return "only the entry points import app.ts";
  return null;
}

describe("layers", () => {
  it("every import keeps the layering, apart from the known exceptions", () => {
    const found = imports.map((i) => ({ ...i, rule: violates(i.from, i.to) })).filter((i) => i.rule !== null);
    const unknown = found.filter((i) => !knownExceptions.has(`${i.file} -> ${i.to}`));
    expect(unknown.map((i) => `${i.file} -> ${i.to}: ${String(i.rule)}`)).toEqual([]);
    const stale = [...knownExceptions].filter((e) => !found.some((i) => `${i.file} -> ${i.to}` === e));
    expect(stale, "paid-off exceptions to remove from the list").toEqual([]);
  });
});
