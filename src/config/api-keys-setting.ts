/**
 * The `API_KEYS` setting: bearer keys with their tenant and roles. Parsed once at start-up with the
 * rest of the configuration; the HTTP layer keeps only digests of the keys (src/http/api-keys.ts).
 */
/**
 * What a key may do:
 * - `read`: the GET routes (guardrail status, reflections, insights);
 * - `vote`: feedback on lessons;
 * - `decide`: report a finished loop and have it decided (`loop-complete`);
 * - `override`: lift guardrails (`override-guardrails`, or override flags on `loop-complete`).
 */
export const apiRoles = ["read", "vote", "decide", "override"] as const;
export type ApiRole = (typeof apiRoles)[number];

/** A key's tenant and roles. */
export interface ApiGrant {
  tenant: string;
  roles: ReadonlySet<ApiRole>;
}

/** The roles of a key that names none. */
export const defaultRoles: readonly ApiRole[] = ["read"];

const roleList = new RegExp(`^(${apiRoles.join("|")})(\\+(${apiRoles.join("|")}))*$`);

/** `key:tenant` or `key:tenant:role+role`; the key may hold colons itself. */
function parseEntry(entry: string): { key: string; grant: ApiGrant } | null {
  const parts = entry.split(":").map((p) => p.trim());
  const last = parts.at(-1) ?? "";
  const withRoles = parts.length >= 3 && roleList.test(last);
  // A key that names no role may only read: voting, deciding and overriding are granted by name.
  const roles = new Set<ApiRole>(withRoles ? (last.split("+") as ApiRole[]) : defaultRoles);
  const rest = withRoles ? parts.slice(0, -1) : parts;
  const tenant = rest.at(-1) ?? "";
  const key = rest.slice(0, -1).join(":");
  if (key.length < 8 || !tenant) return null;
  return { key, grant: { tenant, roles } };
}

/** Parses the entries of `API_KEYS`; throws with every malformed entry listed. */
export function parseApiKeys(spec: string): Map<string, ApiGrant> {
  const keys = new Map<string, ApiGrant>();
  const problems: string[] = [];
  for (const [index, raw] of spec.split(",").entries()) {
    const entry = raw.trim();
    if (!entry) continue;
    const parsed = parseEntry(entry);
    if (!parsed) {
      problems.push(
        `entry ${String(index + 1)}: expected key:tenant or key:tenant:roles with a key of at least 8 characters`,
      );
      continue;
    }
    if (keys.has(parsed.key)) problems.push(`entry ${String(index + 1)}: duplicate key`);
    keys.set(parsed.key, parsed.grant);
  }
  if (problems.length) throw new Error(`API_KEYS: ${problems.join("; ")}`);
  return keys;
}
