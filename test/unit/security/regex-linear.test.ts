import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Every regular expression literal in src/, run against a megabyte of text built to make
 * backtracking patterns quadratic (long runs of one character class, followed by a character
 * that breaks the match). Untrusted text reaches many of them (traces, model answers, headers);
 * one slow pattern blocks the event loop and stops the partition.
 */
const root = fileURLToPath(new URL("../../../src/", import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

function regexLiterals(file: string): { where: string; regex: RegExp }[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const found: { where: string; regex: RegExp }[] = [];
  const visit = (node: ts.Node) => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const text = node.getText(source);
      const end = text.lastIndexOf("/");
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      // Without g/y: each run starts at 0 and tries every position, the worst case.
      const flags = text.slice(end + 1).replace(/[gy]/g, "");
      found.push({
        where: `${relative(root, file)}:${String(line)}`,
        regex: new RegExp(text.slice(1, end), flags),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const size = 1_000_000;
const runs = [
  " ",
  "\t",
  "\n",
  "1",
  "a",
  "A",
  "_",
  "-",
  ".",
  "1.",
  "a1",
  ":",
  "/",
  "`",
  "=",
  "0x",
  "é",
  "{",
  '"',
  "ab ",
];
const hostile = runs.flatMap((run) => {
  const body = run.repeat(Math.ceil(size / run.length)).slice(0, size);
  return [body + "!", "x" + body + "\u0000"];
});

describe("regular expressions in src/ on hostile text", () => {
  const literals = sourceFiles(root).flatMap(regexLiterals);

  it("finds the project's patterns", () => {
    expect(literals.length).toBeGreaterThan(20);
  });

  it.each(literals.map((l) => [l.where, l.regex] as const))("%s runs in linear time", (_where, regex) => {
    for (const text of hostile) {
      const started = performance.now();
      regex.exec(text);
      text.replace(regex, "");
      const ms = performance.now() - started;
      // Linear work over 1 MB takes a few milliseconds; a quadratic pattern takes minutes.
      expect(ms, `${regex.source} on ${JSON.stringify(text.slice(0, 6))}…`).toBeLessThan(1_000);
    }
  });
});
