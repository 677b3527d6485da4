import { createHash, timingSafeEqual } from "node:crypto";
import type { ApiGrant } from "../config/api-keys-setting.js";

export { apiRoles, parseApiKeys, type ApiGrant, type ApiRole } from "../config/api-keys-setting.js";

/**
 * Bearer API keys mapped to tenants and roles, from
 * `API_KEYS="key1:tenantA,key2:tenantB:read+vote"`. A key without roles may only read; every
 * other role is granted by name. Only SHA-256 digests are kept in memory and compared in constant
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
