import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Bearer API keys mapped to tenants, from `API_KEYS="key1:tenantA,key2:tenantB"`. Only SHA-256
 * digests are kept in memory and compared in constant time; a key never appears in logs.
 */
export interface ApiKeyring {
  /** The tenant of a presented key, or null when the key is unknown. */
  tenantFor(key: string): string | null;
  readonly size: number;
}

function digest(key: string): Buffer {
  return createHash("sha256").update(key, "utf8").digest();
}

/** Parses `key:tenant` pairs; throws with every malformed entry listed. */
export function parseApiKeys(spec: string): Map<string, string> {
  const keys = new Map<string, string>();
  const problems: string[] = [];
  for (const [index, raw] of spec.split(",").entries()) {
    const entry = raw.trim();
    if (!entry) continue;
    const at = entry.lastIndexOf(":");
    const key = at > 0 ? entry.slice(0, at).trim() : "";
    const tenant = at > 0 ? entry.slice(at + 1).trim() : "";
    if (key.length < 8 || !tenant) {
      problems.push(`entry ${String(index + 1)}: expected key:tenant with a key of at least 8 characters`);
      continue;
    }
    if (keys.has(key)) problems.push(`entry ${String(index + 1)}: duplicate key`);
    keys.set(key, tenant);
  }
  if (problems.length) throw new Error(`API_KEYS: ${problems.join("; ")}`);
  return keys;
}

export function createApiKeyring(keys: ReadonlyMap<string, string>): ApiKeyring {
  const entries = [...keys].map(([key, tenant]) => ({ hash: digest(key), tenant }));
  return {
    size: entries.length,
    tenantFor(key) {
      const presented = digest(key);
      let tenant: string | null = null;
      // Compare against every entry so timing does not reveal which key matched.
      for (const entry of entries) if (timingSafeEqual(entry.hash, presented)) tenant = entry.tenant;
      return tenant;
    },
  };
}
