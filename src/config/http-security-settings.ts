import { z } from "zod";
import { boolFlag } from "./env-parsing.js";

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
  /**
   * `POST /api/v1/reflect`: how long the answer waits for the pipeline (then 202 with the event id;
   * the run goes on), the largest body it takes, and the runs one process reflects at once (more
   * get 503 with Retry-After).
   */
  REFLECT_HTTP_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(20_000),
  REFLECT_HTTP_MAX_BODY_BYTES: z.coerce.number().int().min(1_024).max(16_777_216).default(1_048_576),
  REFLECT_HTTP_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(10_000).default(16),
  /** Every answer is checked against its documented schema (a mismatch answers 500): for tests. */
  HTTP_VALIDATE_RESPONSES: boolFlag.default(false),
};

type HttpSecurityEnv = z.infer<z.ZodObject<typeof httpSecurityEnv>>;

export interface HttpSecurityConfig {
  /** TRUSTED_PROXIES: whose forwarded headers are believed (none when empty). */
  trustedProxies: string[];
  /** AUDIT_HMAC_KEY: keys the audit's fingerprints of API keys. */
  auditHmacKey: string | undefined;
  /** Requests one API key may make to lessons for a task a minute, per process; more get 429. */
  lessonsForTaskPerMinute: number;
  /** `POST /api/v1/reflect`'s bounds: its deadline, its body, the runs in flight per process. */
  reflect: { timeoutMs: number; maxBodyBytes: number; maxInFlight: number };
  /** HTTP_VALIDATE_RESPONSES: answers are checked against their documented schemas. */
  validateResponses: boolean;
}

export function httpSecurityOf(e: HttpSecurityEnv): HttpSecurityConfig {
  return {
    auditHmacKey: e.AUDIT_HMAC_KEY,
    lessonsForTaskPerMinute: e.LESSONS_FOR_TASK_REQUESTS_PER_MINUTE,
    reflect: {
      timeoutMs: e.REFLECT_HTTP_TIMEOUT_MS,
      maxBodyBytes: e.REFLECT_HTTP_MAX_BODY_BYTES,
      maxInFlight: e.REFLECT_HTTP_MAX_IN_FLIGHT,
    },
    validateResponses: e.HTTP_VALIDATE_RESPONSES,
    trustedProxies: (e.TRUSTED_PROXIES ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean),
  };
}
