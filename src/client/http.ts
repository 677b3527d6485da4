/**
 * One request to Reflector's HTTP API, with the client's policies: a time limit per attempt,
 * retries with exponential backoff and full jitter on `429` and `503` (honouring `Retry-After`,
 * seconds or an HTTP date), and on network errors and timeouts for idempotent calls only.
 */
import { problemOf, ReflectorApiError, retryAfterMs } from "./errors.js";

export interface RetryOptions {
  /** Attempts after the first (default 3; 0 turns retrying off). */
  retries?: number;
  /** The first backoff's ceiling (default 200 ms); each retry doubles it. */
  baseDelayMs?: number;
  /** No backoff waits longer than this (default 10 s). */
  maxDelayMs?: number;
  /**
   * The longest `Retry-After` honoured (default 60 s): an answer asking for a longer wait is
   * thrown at once, with `retryAfterMs` set, rather than slept on.
   */
  maxRetryAfterMs?: number;
}

/** What one call may set for itself. */
export interface CallOptions {
  /** Aborts the call (and its retries) when it fires; an abort is never retried. */
  signal?: AbortSignal;
  /** This call's time limit per attempt (default: the client's `requestTimeoutMs`). */
  timeoutMs?: number;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey: string;
  requestTimeoutMs?: number;
  retry?: RetryOptions;
  fetch?: typeof fetch;
  /** Extra headers sent with every request (a `user-agent`, a tracing header). */
  headers?: Record<string, string>;
  /** Where waits happen (tests replace it); default `setTimeout`. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** A number in [0, 1) (tests replace it); default `Math.random`. */
  random?: () => number;
}

export interface RequestSpec {
  method: "GET" | "POST";
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: { json: unknown } | { bytes: Uint8Array; type: string };
  /** Safe to send again after a network error or a timeout (the server may have acted on it). */
  idempotent: boolean;
}

export interface Answer {
  status: number;
  json: unknown;
}

export const retryStatuses: ReadonlySet<number> = new Set([429, 503]);

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The full-jitter backoff before retry `attempt` (0-based): uniform in [0, min(max, base·2^attempt)). */
export function backoffMs(attempt: number, retry: RetryOptions, random: () => number): number {
  const ceiling = Math.min(retry.maxDelayMs ?? 10_000, (retry.baseDelayMs ?? 200) * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

export function createTransport(options: TransportOptions) {
  let base = options.baseUrl;
  while (base.endsWith("/")) base = base.slice(0, -1);
  const doFetch = options.fetch ?? globalThis.fetch;
  const retry = options.retry ?? {};
  const retries = retry.retries ?? 3;
  const sleep = options.sleep ?? defaultSleep;
  const random = options.random ?? Math.random;

  function urlOf(spec: RequestSpec): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) params.set(key, String(value));
    }
    const query = params.toString();
    return `${base}${spec.path}${query ? `?${query}` : ""}`;
  }

  async function once(spec: RequestSpec, call: CallOptions): Promise<Answer> {
    const headers: Record<string, string> = {
      accept: "application/json, application/problem+json",
      ...options.headers,
      authorization: `Bearer ${options.apiKey}`,
    };
    let payload: string | Uint8Array | undefined;
    if (spec.body && "json" in spec.body) {
      headers["content-type"] = "application/json";
      payload = JSON.stringify(spec.body.json);
    } else if (spec.body) {
      headers["content-type"] = spec.body.type;
      payload = spec.body.bytes;
    }
    const timeout = AbortSignal.timeout(call.timeoutMs ?? options.requestTimeoutMs ?? 10_000);
    const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
    const response = await doFetch(urlOf(spec), {
      method: spec.method,
      headers,
      ...(payload !== undefined ? { body: payload } : {}),
      signal,
    });
    const text = await response.text();
    if (!response.ok) {
      throw new ReflectorApiError(
        response.status,
        problemOf(text),
        text,
        retryAfterMs(response.headers.get("retry-after")),
      );
    }
    return { status: response.status, json: text ? JSON.parse(text) : null };
  }

  /** The request, retried as the policy says; throws the last error when no retry is left. */
  async function request(spec: RequestSpec, call: CallOptions = {}): Promise<Answer> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await once(spec, call);
      } catch (err) {
        if (call.signal?.aborted || attempt >= retries) throw err;
        let wait: number;
        if (err instanceof ReflectorApiError) {
          if (!retryStatuses.has(err.status)) throw err;
          if (err.retryAfterMs !== null) {
            if (err.retryAfterMs > (retry.maxRetryAfterMs ?? 60_000)) throw err;
            // At least what the server asked for; a little more, so callers told the same do not return at once.
            wait = err.retryAfterMs + backoffMs(0, retry, random);
          } else {
            wait = backoffMs(attempt, retry, random);
          }
        } else if (spec.idempotent && !(err instanceof SyntaxError)) {
          // A network error or this attempt's timeout: the server may or may not have acted.
          wait = backoffMs(attempt, retry, random);
        } else {
          throw err;
        }
        await sleep(wait, call.signal);
      }
    }
  }

  return { request };
}

export type Transport = ReturnType<typeof createTransport>;
