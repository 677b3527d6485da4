/**
 * `reflector demo` publishes the examples' events into the topics and database its settings name,
 * creating topics and migrating on the way: pointed at production by an inherited environment, it
 * would feed made-up failures to every consumer. It runs against this machine's services only
 * (loopback addresses, or the services it starts itself when KAFKA_BROKERS is unset), and not where
 * the environment says production, unless `--allow-remote` says it is meant.
 */

const loopback = (host: string) =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host);

/** The host of `host:port`, `[v6]:port` or a URL's authority. */
function hostOf(address: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(address)?.[1] ?? address;
  const withoutUser = authority.slice(authority.lastIndexOf("@") + 1);
  if (withoutUser.startsWith("[")) return withoutUser.slice(0, withoutUser.indexOf("]") + 1).toLowerCase();
  return (withoutUser.split(":")[0] ?? "").toLowerCase();
}

/** Why the demo must not run against these settings, or null when they are this machine's. */
export function demoTargetProblem(env: Record<string, string | undefined>): string | null {
  for (const name of ["REFLECTOR_ENV", "NODE_ENV"]) {
    if ((env[name] ?? "").trim().toLowerCase() === "production")
      return `${name}=production: the demo publishes made-up events; run it on a laptop or CI, or pass --allow-remote on purpose`;
  }
  const remote: string[] = [];
  for (const broker of (env.KAFKA_BROKERS ?? "")
    .split(",")
    .map((b) => b.trim())
    .filter(Boolean)) {
    if (!loopback(hostOf(broker))) remote.push(`KAFKA_BROKERS (${hostOf(broker)})`);
  }
  for (const name of ["DATABASE_URL", "REDIS_URL", "SCHEMA_REGISTRY_URL"]) {
    const value = env[name];
    if (value !== undefined && value.trim() !== "" && !loopback(hostOf(value.trim())))
      remote.push(`${name} (${hostOf(value.trim())})`);
  }
  if (remote.length === 0) return null;
  return `the demo publishes made-up events and creates topics; ${remote.join(", ")} ${remote.length === 1 ? "is" : "are"} not this machine: pass --allow-remote if that is meant`;
}
