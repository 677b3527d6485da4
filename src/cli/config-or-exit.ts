import { ConfigError, loadConfig, type Config } from "../config/config.js";

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
