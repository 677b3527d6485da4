// Runs the CLI from source (`node --import tsx test/support/run-cli.ts <args>`), for CLI tests.
// Like bin/reflector.js: tracing hooks its libraries before the CLI loads them.
import { instrumentEntry } from "../../src/cli/instrument-entry.js";

await instrumentEntry(process.argv, process.env);
const { runCli } = await import("../../src/cli/reflector.js");
await runCli(process.argv);
