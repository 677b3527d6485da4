import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/**
 * The rules of .dependency-cruiser.mjs run, as `npm run layers` runs them, over a throw-away tree
 * of probe files (path under the tree → its text). The probes live in a temporary directory, never
 * in this repository's src/, so nothing else sees them.
 */
const repo = realpathSync(fileURLToPath(new URL("../../", import.meta.url)));
const depcruise = join(repo, "node_modules/dependency-cruiser/bin/dependency-cruiser.mjs");

export interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

export function writeProbeTree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "reflector-layers-"));
  symlinkSync(join(repo, "node_modules"), join(root, "node_modules"));
  writeFileSync(
    join(root, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", verbatimModuleSyntax: true },
      include: ["src"],
    }),
  );
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, file)), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

export function removeProbeTree(root: string): void {
  if (root) rmSync(root, { recursive: true, force: true });
}

/** Every violation the layer rules find in the probe tree. */
export async function layerViolations(root: string): Promise<Violation[]> {
  // process.execPath: the Node.js running the tests, which is one dependency-cruiser supports.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [depcruise, "src", "--config", join(repo, ".dependency-cruiser.mjs"), "--output-type", "json"],
    { cwd: root, maxBuffer: 16 * 1024 * 1024 },
  ).catch((err: unknown) => {
    // depcruise exits non-zero when it finds violations; its JSON report is still on stdout.
    const { stdout: out, stderr } = err as { stdout?: string; stderr?: string };
    if (!out) throw new Error(`dependency-cruiser did not run: ${stderr ?? String(err)}`);
    return { stdout: out };
  });
  const report = JSON.parse(stdout) as { summary: { violations: Violation[] } };
  return report.summary.violations;
}
