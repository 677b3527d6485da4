#!/usr/bin/env node
// Entry point of `npx reflector`: the compiled CLI (built by `npm run build`, which `npm ci` runs).
// The CLI is imported only after tracing has hooked the libraries it traces (docs/operations.md).
import { instrumentEntry } from "../dist/cli/instrument-entry.js";

await instrumentEntry(process.argv, process.env);
const { runCli } = await import("../dist/cli/reflector.js");
await runCli(process.argv);
