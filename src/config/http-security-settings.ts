import { z } from "zod";

/**
 * The API's settings about who is believed, how callers are named and how much one may ask: the
 * proxies whose forwarded headers count, the key of the audit's fingerprints, and a key's rate on
 * lessons for a task. `config.ts` spreads them into the one schema and into `Config.http`.
 */
export const httpSecurityEnv = {
  /**
   * The secret that keys the audit's fingerprints of API keys (HMAC-SHA256), at least 32
   * characters; unset: a random one per process, whose fingerprints match only within it.
   */
  AUDIT_HMAC_KEY: z.string().min(32).optional(),
  /**
   * The proxies in front of the API (addresses or CIDRs, comma-separated): only their
   * `X-Forwarded-For` names the client (whom the unknown-key throttle counts) and only their
   * `X-Forwarded-Proto` says the key came over TLS. Unset: no forwarded header is believed.
   */
  TRUSTED_PROXIES: z
    .string()
    .trim()
    .regex(/^[0-9a-fA-F:./,\s]*$/, "addresses or CIDRs, comma-separated")
    .optional(),
  LESSONS_FOR_TASK_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(600),
};

type HttpSecurityEnv = z.infer<z.ZodObject<typeof httpSecurityEnv>>;

export interface HttpSecurityConfig {
  /** TRUSTED_PROXIES: whose forwarded headers are believed (none when empty). */
  trustedProxies: string[];
  /** AUDIT_HMAC_KEY: keys the audit's fingerprints of API keys. */
  auditHmacKey: string | undefined;
  /** Requests one API key may make to lessons for a task a minute, per process; more get 429. */
  lessonsForTaskPerMinute: number;
}

export function httpSecurityOf(e: HttpSecurityEnv): HttpSecurityConfig {
  return {
    auditHmacKey: e.AUDIT_HMAC_KEY,
    lessonsForTaskPerMinute: e.LESSONS_FOR_TASK_REQUESTS_PER_MINUTE,
    trustedProxies: (e.TRUSTED_PROXIES ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean),
  };
}
