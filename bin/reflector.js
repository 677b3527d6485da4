#!/usr/bin/env node
// Entry point of `npx reflector`: the compiled CLI (built by `npm run build`, which `npm ci` runs).
import { runCli } from "../dist/cli/reflector.js";

await runCli(process.argv);
