import { createHash, timingSafeEqual } from "node:crypto";

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

/**
 * Bearer API keys mapped to tenants and roles, from
 * `API_KEYS="key1:tenantA,key2:tenantB:read+vote"`. A key without roles has all of them (the
 * format before roles existed). Only SHA-256 digests are kept in memory and compared in constant
 * time; a key never appears in logs.
 */
export interface ApiKeyring {
  /** The tenant and roles of a presented key, or null when the key is unknown. */
  grantFor(key: string): ApiGrant | null;
  /** The tenant of a presented key, or null when the key is unknown. */
  tenantFor(key: string): string | null;
  readonly size: number;
}

function digest(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

const roleList = new RegExp(`^(${apiRoles.join("|")})(\\+(${apiRoles.join("|")}))*$`);

/** `key:tenant` or `key:tenant:role+role`; the key may hold colons itself. */
function parseEntry(entry: string): { key: string; grant: ApiGrant } | null {
  const parts = entry.split(":").map((p) => p.trim());
  const last = parts.at(-1) ?? "";
  const withRoles = parts.length >= 3 && roleList.test(last);
  const roles = new Set<ApiRole>(withRoles ? (last.split("+") as ApiRole[]) : apiRoles);
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

export function createApiKeyring(keys: ReadonlyMap<string, ApiGrant>): ApiKeyring {
  const entries = [...keys].map(([key, grant]) => ({ hash: digest(key), grant }));
  const grantFor = (key: string): ApiGrant | null => {
    const presented = digest(key);
    let grant: ApiGrant | null = null;
    // Compare against every entry so timing does not reveal which key matched.
    for (const entry of entries) if (timingSafeEqual(entry.hash, presented)) grant = entry.grant;
    return grant;
  };
  return {
    size: entries.length,
    grantFor,
    tenantFor: (key) => grantFor(key)?.tenant ?? null,
  };
}
