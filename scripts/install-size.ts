/**
 * What `npm ci` put in node_modules, in bytes of file content: the production dependencies (the
 * packages package-lock.json does not mark `dev`, what `npm prune --omit=dev` keeps), the dev
 * dependencies, and the share of onnxruntime-node's native builds for other systems and CPUs than
 * this one (what scripts/prune-foreign-binaries.sh removes from the image).
 *
 *   npx tsx scripts/install-size.ts
 */
import { existsSync, lstatSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as {
  packages: Record<string, { dev?: boolean }>;
};

/** Bytes of the files under `dir`, not counting nested node_modules (their own lock entries) or links. */
function bytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") total += bytes(path);
    } else if (entry.isFile()) total += lstatSync(path).size;
  }
  return total;
}

let production = 0;
let dev = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  if (path === "" || !existsSync(path)) continue;
  if (entry.dev) dev += bytes(path);
  else production += bytes(path);
}
const napi = "node_modules/onnxruntime-node/bin/napi-v6";
let foreign = 0;
if (existsSync(napi)) {
  for (const system of readdirSync(napi)) {
    for (const cpu of readdirSync(join(napi, system))) {
      if (system !== process.platform || cpu !== process.arch) foreign += bytes(join(napi, system, cpu));
    }
  }
}
const mb = (n: number) => `${(n / 1e6).toFixed(0)} MB`;
console.log(`production dependencies: ${mb(production)}`);
console.log(`dev dependencies:        ${mb(dev)}`);
console.log(
  `onnxruntime-node builds for other platforms than ${process.platform}/${process.arch}: ${mb(foreign)}`,
);
console.log(`production dependencies without them (the image's): ${mb(production - foreign)}`);
