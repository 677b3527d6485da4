import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * Prometheus's own `promtool` (check rules, unit-test alerts) for the rule tests. No npm
 * package ships it; Debian's `prometheus` package does. Rather than installing that package
 * (which would start a Prometheus server), the test setup downloads the .deb with apt and
 * extracts only `promtool` into `.cache/promtool` (git-ignored). PROMTOOL or a promtool on
 * PATH wins over the download.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const cacheDir = `${root}.cache/promtool`;
const cached = `${cacheDir}/promtool`;
const downloadTimeoutMs = 180_000;
const updateTimeoutMs = 300_000;

function works(binary: string): boolean {
  const probe = spawnSync(binary, ["--version"], { encoding: "utf8" });
  return probe.status === 0;
}

function aptDownload(dir: string): boolean {
  const result = spawnSync("apt-get", ["download", "prometheus"], {
    cwd: dir,
    encoding: "utf8",
    timeout: downloadTimeoutMs,
  });
  return result.status === 0 && readdirSync(dir).some((f) => f.endsWith(".deb"));
}

/** Path of a working promtool; downloads and extracts it once if needed. */
export function ensurePromtool(): string {
  const fromEnv = process.env.PROMTOOL;
  if (fromEnv) {
    if (!works(fromEnv)) throw new Error(`PROMTOOL=${fromEnv} does not run`);
    return fromEnv;
  }
  if (existsSync(cached) && works(cached)) return cached;
  if (works("promtool")) return "promtool";

  if (spawnSync("apt-get", ["--version"]).error) {
    throw new Error(
      "promtool not found and no apt-get to fetch it: install Prometheus's promtool or set PROMTOOL",
    );
  }
  const work = `${cacheDir}/download`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  // A machine whose package lists were never fetched knows no `prometheus` yet: refresh once (root only).
  if (!aptDownload(work) && process.getuid?.() === 0) {
    spawnSync("apt-get", ["update", "-qq"], { encoding: "utf8", timeout: updateTimeoutMs });
    aptDownload(work);
  }
  const deb = readdirSync(work).find((f) => f.endsWith(".deb"));
  if (!deb) {
    throw new Error(
      "could not download Debian's prometheus package (for promtool) with `apt-get download prometheus`; " +
        "is the Debian mirror reachable? Alternatively install promtool or set PROMTOOL",
    );
  }
  const extract = spawnSync("dpkg-deb", ["-x", `${work}/${deb}`, `${work}/x`], { encoding: "utf8" });
  if (extract.status !== 0) throw new Error(`dpkg-deb could not unpack ${deb}: ${extract.stderr}`);
  copyFileSync(`${work}/x/usr/bin/promtool`, cached);
  chmodSync(cached, 0o755);
  rmSync(work, { recursive: true, force: true });
  if (!works(cached)) throw new Error(`${cached} was extracted from ${deb} but does not run`);
  return cached;
}

export interface PromtoolRun {
  status: number;
  output: string;
}

export function promtool(binary: string, args: string[]): PromtoolRun {
  const result = spawnSync(binary, args, { encoding: "utf8", timeout: 120_000 });
  if (result.error) throw result.error;
  return { status: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}
