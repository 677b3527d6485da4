import { execFile, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

/**
 * The client packages as their users get them: the TypeScript one packed with `npm pack` (its
 * `prepack` builds it) and installed from the tarball into an empty project, the Python one
 * installed with pip into a fresh virtual environment. Nothing is fetched from a registry.
 */
export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

/** The environment of a nested npm: without the npm_* variables of an npm that may be running the tests. */
function npmEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return { ...env, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" };
}

export interface PackedTypeScript {
  tarball: string;
  /** The files the tarball holds, relative to the package (`dist/index.js`, …). */
  files: string[];
  /** The example agent loop, type-checked against the installed package and compiled to this file. */
  script: string;
}

/**
 * Packs clients/typescript from a clean build, installs the tarball into `work/ts-agent` and
 * compiles examples/agent-loop/agent-loop.ts there, its `@reflector/client` resolved through
 * the installed package's `exports` (types included): a broken build or export fails here.
 */
export async function packTypeScriptClient(work: string): Promise<PackedTypeScript> {
  const pkg = join(repoRoot, "clients/typescript");
  rmSync(join(pkg, "dist"), { recursive: true, force: true });
  const packed = await run("npm", ["pack", "--json", "--pack-destination", work], {
    cwd: pkg,
    env: npmEnv(),
    maxBuffer: 16 * 1024 * 1024,
  });
  // prepack's own output (tsc) may come before the JSON.
  const json = packed.stdout.slice(packed.stdout.indexOf("["));
  const [info] = JSON.parse(json) as { filename: string; files: { path: string }[] }[];
  if (!info) throw new Error(`npm pack printed no package: ${packed.stdout}`);
  const tarball = join(work, info.filename);

  const project = join(work, "ts-agent");
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({ name: "agent", private: true, type: "module" }),
  );
  await run("npm", ["install", "--offline", "--ignore-scripts", tarball], { cwd: project, env: npmEnv() });
  copyFileSync(join(repoRoot, "examples/agent-loop/agent-loop.ts"), join(project, "agent-loop.ts"));
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        lib: ["ES2023"],
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        types: ["node"],
        typeRoots: [join(repoRoot, "node_modules/@types")],
        outDir: "out",
      },
      files: ["agent-loop.ts"],
    }),
  );
  await run(process.execPath, [join(repoRoot, "node_modules/typescript/bin/tsc"), "-p", project]);
  return { tarball, files: info.files.map((f) => f.path), script: join(project, "out/agent-loop.js") };
}

/** python3, when the machine has one; the tests that need it say so when it is absent. */
export const python3 = spawnSync("python3", ["--version"]).status === 0 ? "python3" : null;

/**
 * A fresh virtual environment in `work/venv` with clients/python installed by pip, offline (the
 * package's build backend is its own, standard library only); returns its interpreter.
 */
export async function installPythonClient(work: string): Promise<string> {
  const venv = join(work, "venv");
  try {
    await run("python3", ["-m", "venv", venv]);
  } catch (err) {
    throw new Error(
      `python3 -m venv failed: the tests need the venv module with ensurepip (Debian: apt-get install python3-venv). ${(err as Error).message}`,
    );
  }
  const python = join(venv, "bin/python");
  if (!existsSync(python)) throw new Error(`no interpreter in the new virtual environment ${venv}`);
  await run(
    python,
    ["-m", "pip", "install", "--no-index", "--disable-pip-version-check", join(repoRoot, "clients/python")],
    {
      env: { ...process.env, PIP_NO_INPUT: "1" },
    },
  );
  return python;
}
