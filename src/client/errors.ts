/**
 * The error a call to Reflector's HTTP API throws when the server answers with an error status.
 * It carries the RFC 9457 problem details (`type`, `title`, `status`, `detail`, `instance`) and
 * the keys servers answered before them (`error`, `message`, `issues`), whichever the server sent.
 */

/** An RFC 9457 problem details body, with the keys Reflector kept for older clients. */
export interface ProblemDetails {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  instance?: string;
  /** The short error code (`bad_request`, `not_found`, `too_many_requests`, …). */
  error?: string;
  message?: string;
  /** A `400`'s offending fields, one line each. */
  issues?: unknown[];
}

export class ReflectorApiError extends Error {
  /** The short error code: the body's `error`, else the last segment of its `type`, else `error`. */
  readonly error: string;
  /** The problem details as the server sent them (an empty object when the body was not JSON). */
  readonly problem: ProblemDetails;
  /** What `Retry-After` asked for, in milliseconds (null when the answer had none). */
  readonly retryAfterMs: number | null;

  constructor(
    readonly status: number,
    problem: ProblemDetails,
    rawText = "",
    retryAfterMs: number | null = null,
  ) {
    const code = problem.error ?? lastSegment(problem.type) ?? "error";
    const text = problem.detail ?? problem.message ?? problem.title ?? rawText;
    super(`reflector answered ${String(status)} ${code}: ${text}`);
    this.name = "ReflectorApiError";
    this.error = code;
    this.problem = problem;
    this.retryAfterMs = retryAfterMs;
  }

  get type(): string | undefined {
    return this.problem.type;
  }
  get title(): string | undefined {
    return this.problem.title;
  }
  get detail(): string | undefined {
    return this.problem.detail ?? this.problem.message;
  }
  get instance(): string | undefined {
    return this.problem.instance;
  }
  get issues(): unknown[] {
    return this.problem.issues ?? [];
  }
}

function lastSegment(type: string | undefined): string | undefined {
  if (!type || type === "about:blank") return undefined;
  const segment = type.split(/[/#]/).filter(Boolean).at(-1);
  return segment?.replace(/-/g, "_");
}

/** The problem details of an error answer's text: JSON problem details or the old `{error, message}`. */
export function problemOf(text: string): ProblemDetails {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
      const body = parsed as Record<string, unknown>;
      const str = (key: string) => (typeof body[key] === "string" ? body[key] : undefined);
      const problem: ProblemDetails = {};
      for (const key of ["type", "title", "detail", "instance", "error", "message"] as const) {
        const value = str(key);
        if (value !== undefined) problem[key] = value;
      }
      if (typeof body.status === "number") problem.status = body.status;
      if (Array.isArray(body.issues)) problem.issues = body.issues;
      return problem;
    }
  } catch {
    // not JSON: the raw text is the message
  }
  return {};
}

/**
 * `Retry-After` in milliseconds: a number of seconds or an HTTP date (RFC 9110); null when absent
 * or unreadable. A date in the past is 0.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}
