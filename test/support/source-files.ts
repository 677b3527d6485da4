import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** src/, for tests that read the code as text (one home per rule, one builder per connection). */
const root = fileURLToPath(new URL("../../src/", import.meta.url));

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

/** Every TypeScript file of src/: its path under src/ and its text. */
export const sources: readonly { file: string; text: string }[] = tsFiles(root).map((path) => ({
  file: relative(root, path),
  text: readFileSync(path, "utf8"),
}));

/** The files of src/ (paths under src/, sorted) whose text matches `pattern`. */
export function filesMatching(pattern: RegExp): string[] {
  return sources
    .filter((s) => pattern.test(s.text))
    .map((s) => s.file)
    .sort();
}
