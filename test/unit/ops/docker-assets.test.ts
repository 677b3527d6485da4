import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { envVariableNames, loadConfig } from "../../../src/config/config.js";

// No Docker engine on these machines: the image is never built here, so these tests pin down
// what a reviewer would check by eye in the Dockerfile and docker-compose.yml.
const root = fileURLToPath(new URL("../../../", import.meta.url));
const read = (path: string) => readFileSync(`${root}${path}`, "utf8");

interface Service {
  image?: string;
  build?: unknown;
  entrypoint?: string[];
  command?: string[];
  volumes?: string[];
  environment?: Record<string, string | number>;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
  ports?: (string | { host_ip?: string })[];
}
const compose = parse(read("docker-compose.yml")) as { services: Record<string, Service> };
const services = compose.services;
const reflector = services.reflector ?? {};

/** Compose's `${NAME:-default}` interpolation, as `docker compose` does it with no .env file. */
function interpolate(value: string | number): string {
  return String(value).replace(/\$\{([A-Z_]+):-([^}]*)\}/g, (_match, _name, fallback: string) => fallback);
}

function seconds(duration: string): number {
  const match = /^(\d+)(ms|s|m)$/.exec(duration);
  if (!match) throw new Error(`not a compose duration: ${duration}`);
  const factor = { ms: 0.001, s: 1, m: 60 }[match[2] as "ms" | "s" | "m"];
  return Number(match[1]) * factor;
}

describe("docker-compose.yml", () => {
  it("runs Kafka in KRaft mode from the official image, a schema registry, Redis, Postgres and Reflector", () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining(["kafka", "registry", "redis", "postgres", "reflector"]),
    );
    expect(services.kafka?.image).toMatch(/^apache\/kafka:\d/);
    const kafkaEnv = services.kafka?.environment ?? {};
    expect(String(kafkaEnv.KAFKA_PROCESS_ROLES)).toBe("broker,controller");
    expect(String(kafkaEnv.KAFKA_CONTROLLER_QUORUM_VOTERS)).toMatch(/^1@kafka:\d+$/);
    // Every listener needs a protocol once any KAFKA_* variable replaces the image's defaults.
    const listeners = String(kafkaEnv.KAFKA_LISTENERS)
      .split(",")
      .map((l) => l.split(":")[0]);
    const mapped = String(kafkaEnv.KAFKA_LISTENER_SECURITY_PROTOCOL_MAP)
      .split(",")
      .map((m) => m.split(":")[0]);
    expect(mapped).toEqual(expect.arrayContaining(listeners));
    expect(String(kafkaEnv.CLUSTER_ID)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(services.registry?.image).toMatch(/apicurio|confluentinc\/cp-schema-registry/);
    expect(services.reflector?.build).toBeDefined();
  });

  it("publishes ports on the host's loopback only, never on every interface", () => {
    const published = Object.entries(services).flatMap(([name, service]) =>
      (service.ports ?? []).map((port) => [name, port] as const),
    );
    expect(published.length).toBeGreaterThan(0);
    for (const [name, port] of published) {
      const hostIp =
        typeof port === "string" ? /^(\d+\.\d+\.\d+\.\d+|\[[^\]]+\]):/.exec(port)?.[1] : port.host_ip;
      expect(hostIp, `${name}: ${JSON.stringify(port)}`).toBe("127.0.0.1");
    }
  });

  it("health-checks every long-running service and starts Reflector only once they are healthy", () => {
    for (const name of ["kafka", "registry", "redis", "postgres", "reflector"]) {
      expect(services[name]?.healthcheck?.test.length, name).toBeGreaterThan(0);
    }
    const dependsOn = reflector.depends_on ?? {};
    for (const name of ["kafka", "postgres", "redis"]) {
      expect(dependsOn[name]?.condition, name).toBe("service_healthy");
    }
    // The registry is reached through the one-shot job that sets its compatibility rule.
    expect(dependsOn["registry-init"]?.condition).toBe("service_completed_successfully");
    expect(services["registry-init"]?.depends_on?.registry?.condition).toBe("service_healthy");
    expect(services["registry-init"]?.command?.join(" ")).toContain('{"compatibility":"BACKWARD"}');
  });

  it("migrates and creates topics before it starts the processor", () => {
    const script = (reflector.entrypoint ?? []).join(" ");
    const steps = ["reflector.js migrate", "reflector.js topics", "exec node bin/reflector.js start"];
    const positions = steps.map((step) => script.indexOf(step));
    expect(
      positions.every((p) => p >= 0),
      script,
    ).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    expect(script).toMatch(/migrate && .*topics && exec /);
  });

  it("gives Reflector only variables that config.ts reads, with values it accepts", () => {
    const env = Object.fromEntries(
      Object.entries(reflector.environment ?? {}).map(([name, value]) => [name, interpolate(value)]),
    );
    const unknown = Object.keys(env).filter(
      (name) => !(envVariableNames as readonly string[]).includes(name),
    );
    expect(unknown).toEqual([]);
    const config = loadConfig(env);
    expect(config.kafka.brokers).toEqual(["kafka:9092"]);
    expect(config.schemaRegistryUrl).toBe("http://registry:8080/apis/ccompat/v7");
    expect(config.databaseUrl).toContain("@postgres:5432/");
    expect(config.redis.url).toContain("//redis:6379");
  });

  it("lets a stopping Reflector drain for longer than its shutdown deadline", () => {
    const config = loadConfig(
      Object.fromEntries(
        Object.entries(reflector.environment ?? {}).map(([name, value]) => [name, interpolate(value)]),
      ),
    );
    expect(seconds(reflector.stop_grace_period ?? "10s")).toBeGreaterThan(config.shutdownDeadlineMs / 1000);
  });
});

describe("docker-compose.yml's agent loop", () => {
  const loop = services["agent-loop"] ?? {};
  const reflectorEnv = () =>
    Object.fromEntries(
      Object.entries(reflector.environment ?? {}).map(([name, value]) => [name, interpolate(value)]),
    );

  it("runs the example agent loop once Reflector is healthy, against Reflector's port, with a key that may send runs and read decisions", () => {
    expect(loop.depends_on?.reflector?.condition).toBe("service_healthy");
    const env = Object.fromEntries(
      Object.entries(loop.environment ?? {}).map(([k, v]) => [k, interpolate(v)]),
    );
    const url = new URL(env.REFLECTOR_URL ?? "");
    const config = loadConfig(reflectorEnv());
    expect(url.hostname).toBe("reflector");
    expect(Number(url.port)).toBe(config.http.port);
    // The key the loop sends is one Reflector takes, with both roles the loop needs.
    const grant = config.http.apiKeys.get(env.REFLECTOR_API_KEY ?? "");
    expect([...(grant?.roles ?? [])]).toEqual(expect.arrayContaining(["decide", "read"]));
    // The loop sends its runs over OTLP/HTTP: Reflector runs the OTLP bridge, which needs a topic.
    expect(config.otlp.topic).toBeDefined();
    // And keys reach it in plain HTTP over Compose's network: allowed on purpose here.
    expect(config.http.allowCleartextApiKeys).toBe(true);
  });

  it("runs the repository's own loop script, mounted read-only", () => {
    const [mount] = loop.volumes ?? [];
    const [source, target, mode] = (mount ?? "").split(":");
    expect(mode).toBe("ro");
    const script = (loop.command ?? []).find((part) => part.startsWith(`${target ?? "?"}/`)) ?? "";
    const local = `${(source ?? "").replace(/^\.\//, "")}${script.slice((target ?? "").length)}`;
    expect(readdirSync(`${root}${source ?? ""}`)).toContain(script.split("/").at(-1));
    expect(read(local)).toContain("POST /v1/traces");
  });

  it("gives the loop script the repository's Python client, mounted read-only on its import path", () => {
    const script = read("examples/agent-loop/agent_loop.py");
    expect(script).toMatch(/^from reflector_client import /m);
    const mounts = (loop.volumes ?? []).map((v) => v.split(":"));
    const client = mounts.find(([source]) => source === "./clients/python");
    expect(client?.[2]).toBe("ro");
    expect(loop.environment?.PYTHONPATH).toBe(`${client?.[1] ?? "?"}/src`);
    expect(readdirSync(`${root}clients/python/src`)).toContain("reflector_client");
  });
});

describe("Dockerfile", () => {
  const dockerfile = read("Dockerfile");
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const final = stages.at(-1) ?? "";

  it("builds in one stage and ships a slim Node 24 image in another", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stages[0]).toMatch(/^node:24[\w.-]*slim AS build/);
    expect(final).toMatch(/^node:24[\w.-]*slim\b/);
    expect(stages[0]).toMatch(/npm ci/);
    const pruned = stages.find((stage) => stage.includes("npm prune --omit=dev")) ?? "";
    expect(pruned).toMatch(/^build AS [\w-]+/);
    expect(final).toMatch(
      new RegExp(`^COPY --from=${/^build AS ([\w-]+)/.exec(pruned)?.[1] ?? "?"} /app/node_modules`, "m"),
    );
  });

  it("ships onnxruntime-node's native build for the image's own platform only", () => {
    const pruned = stages.find((stage) => stage.includes("npm prune --omit=dev")) ?? "";
    expect(pruned).toMatch(
      /npm prune --omit=dev[^\n]*\\\n\s*&& bash scripts\/prune-foreign-binaries\.sh node_modules$/m,
    );
    // The script on a tree shaped as onnxruntime-node ships it (bin/napi-v6/<platform>/<arch>/).
    const modules = mkdtempSync(join(tmpdir(), "prune-binaries-"));
    try {
      const builds = ["darwin/arm64", "linux/arm64", "linux/x64", "win32/arm64", "win32/x64"];
      for (const build of builds) {
        const dir = join(modules, "onnxruntime-node/bin/napi-v6", build);
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, "onnxruntime_binding.node"), "");
      }
      const prune = (...args: string[]) =>
        spawnSync("bash", [`${root}scripts/prune-foreign-binaries.sh`, modules, ...args], {
          encoding: "utf8",
        });
      expect(prune("linux", "x64").status).toBe(0);
      const left = readdirSync(join(modules, "onnxruntime-node/bin"), { recursive: true, encoding: "utf8" });
      expect(left.sort()).toEqual([
        "napi-v6",
        "napi-v6/linux",
        "napi-v6/linux/x64",
        "napi-v6/linux/x64/onnxruntime_binding.node",
      ]);
      // A platform it has no build for is an error, not an image that cannot embed.
      const missing = prune("linux", "arm64");
      expect(missing.status).toBe(1);
      expect(missing.stderr).toContain("no build for linux/arm64");
    } finally {
      rmSync(modules, { recursive: true, force: true });
    }
  });

  it("ships compiled code and production dependencies only, never sources or tests", () => {
    expect(final).toMatch(/COPY --from=build \/app\/dist/);
    expect(final).not.toMatch(/^COPY (src|test|bench|examples)\b/m);
    expect(final).not.toMatch(/^RUN npm (ci|install)/m);
  });

  it("needs no dev dependency at run time (the image has production dependencies only)", () => {
    const pkg = JSON.parse(read("package.json")) as {
      dependencies: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    // Optional dependencies are production ones too (npm installs them unless told not to).
    const production = { ...pkg.dependencies, ...pkg.optionalDependencies };
    const sources = readdirSync(`${root}src`, { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".ts"),
    );
    expect(sources.length).toBeGreaterThan(0);
    // Static imports and re-exports (possibly over several lines), side-effect imports, import().
    const importPatterns = [
      /^\s*(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gm,
      /^\s*import\s+"([^"]+)"/gm,
      /\bimport\(\s*"([^"]+)"\s*\)/g,
    ];
    const imported = new Set(
      sources.flatMap((file) => {
        const code = read(`src/${file}`);
        return importPatterns.flatMap((pattern) => [...code.matchAll(pattern)].map((m) => m[1] ?? ""));
      }),
    );
    const packages = [...imported]
      .filter((spec) => !spec.startsWith("node:") && !spec.startsWith("."))
      .map((spec) =>
        spec
          .split("/")
          .slice(0, spec.startsWith("@") ? 2 : 1)
          .join("/"),
      );
    expect(packages.length).toBeGreaterThan(0);
    expect(packages.filter((name) => !(name in production))).toEqual([]);
  });

  it("carries the default embedder's model where the config looks for it by default", () => {
    const modelStage = stages.find((stage) => /^\S+ AS model\b/.test(stage)) ?? "";
    expect(modelStage).toMatch(/dependency:unpack@embedding-model/);
    expect(read("services/pom.xml")).toMatch(/<id>embedding-model<\/id>/);
    // WORKDIR /app is the package root; the default model directory is relative to it.
    expect(final).toMatch(/^WORKDIR \/app$/m);
    // The model and the static table distilled from it, in a stage with the model copied in.
    const distilled = stages.find((stage) => /^RUN .*distil-embeddings\.ts/m.test(stage)) ?? "";
    expect(distilled).toMatch(/^COPY --from=model \/build\/\.services\/models \.\/\.services\/models$/m);
    const name = /^\S+ AS ([\w-]+)/.exec(distilled)?.[1] ?? "?";
    expect(final).toMatch(
      new RegExp(`^COPY --from=${name} /app/\\.services/models \\./\\.services/models$`, "m"),
    );
    expect(loadConfig({}).embeddingModelDir).toMatch(/\/\.services\/models\/all-minilm-l6-v2$/);
  });

  it("runs as a numeric non-root user", () => {
    const user = /^USER (\S+)$/m.exec(final)?.[1] ?? "root";
    const uid = user.split(":")[0] ?? "";
    expect(uid).toMatch(/^\d+$/);
    expect(Number(uid)).toBeGreaterThan(0);
  });

  it("keeps secrets, caches and dependencies out of the build context", () => {
    const ignored = read(".dockerignore")
      .split("\n")
      .map((line) => line.trim());
    for (const entry of ["node_modules", ".git", ".env", ".services", ".cache", "test"]) {
      expect(ignored, entry).toContain(entry);
    }
  });
});
