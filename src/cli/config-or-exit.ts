import { ConfigError, loadConfig, type Config } from "../config/config.js";
import { ReflectorError } from "../domain/errors.js";

/** `reflector: <what> failed: [CODE: ]message`, the one line a command prints when it fails. */
export function failureLine(what: string, err: unknown): string {
  const code = err instanceof ReflectorError ? `${err.code}: ` : "";
  return `reflector: ${what} failed: ${code}${err instanceof Error ? err.message : String(err)}`;
}

/** The config from the environment, or every problem on stderr and exit code 2. */
export function configOrExit(): Config {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`reflector: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}
