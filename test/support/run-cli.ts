// Runs the CLI from source (`node --import tsx test/support/run-cli.ts <args>`), for CLI tests.
import { runCli } from "../../src/cli/reflector.js";

await runCli(process.argv);
