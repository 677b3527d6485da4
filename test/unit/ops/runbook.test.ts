import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, "utf8");

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  return new Set(
    [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      (m[1] ?? "")
        .trim()
        .toLowerCase()
        .replace(/[^\w\- ]/g, "")
        .replace(/ /g, "-"),
    ),
  );
}

describe("docs/operations.md", () => {
  const runbook = anchors(read("docs/operations.md"));

  it("has a section for every alert's runbook_url", () => {
    const rules = parse(read("helm/reflector/files/reflector-rules.yaml")) as {
      groups: { rules: { alert?: string; annotations?: { runbook_url?: string } }[] }[];
    };
    const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert);
    expect(alerts.length).toBeGreaterThan(0);
    for (const rule of alerts) {
      const url = rule.annotations?.runbook_url ?? "";
      expect(url, rule.alert).toBe(`docs/operations.md#${(rule.alert ?? "").toLowerCase()}`);
      expect(runbook.has(url.split("#")[1] ?? ""), `${url} has no heading`).toBe(true);
    }
  });

  it("has the sections the README and the docs link to", () => {
    const links = [
      "README.md",
      ...["architecture.md", "delivery-guarantees.md", "error-codes.md"].map((f) => `docs/${f}`),
    ].flatMap((file) => [...read(file).matchAll(/operations\.md#([\w-]+)/g)].map((m) => m[1] ?? ""));
    for (const anchor of links) expect(runbook.has(anchor), anchor).toBe(true);
  });
});
