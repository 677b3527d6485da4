/**
 * Throttles guessing of API keys: a client address that presented this many unknown keys within
 * the window gets 429 for the rest of it, before its key is even looked at. Counts live in memory,
 * per process, for at most `maxClients` addresses (the oldest are forgotten first), so a flood of
 * addresses costs bounded memory.
 */
export interface AuthThrottleOptions {
  maxFailures: number;
  windowMs: number;
  maxClients?: number;
  now?: () => number;
}

export interface AuthThrottle {
  /** Seconds until the client may try again, or null when it may now. */
  retryAfter(client: string): number | null;
  /** Counts an unknown or missing key presented by the client. */
  failed(client: string): void;
}

export function createAuthThrottle(options: AuthThrottleOptions): AuthThrottle {
  const now = options.now ?? Date.now;
  const maxClients = options.maxClients ?? 10_000;
  const windows = new Map<string, { startedAt: number; failures: number }>();
  const current = (client: string) => {
    const window = windows.get(client);
    if (window && now() - window.startedAt < options.windowMs) return window;
    if (window) windows.delete(client);
    return null;
  };
  return {
    retryAfter(client) {
      const window = current(client);
      if (!window || window.failures < options.maxFailures) return null;
      return Math.max(1, Math.ceil((window.startedAt + options.windowMs - now()) / 1000));
    },
    failed(client) {
      const window = current(client);
      if (window) {
        window.failures += 1;
        return;
      }
      if (windows.size >= maxClients) {
        const oldest = windows.keys().next().value;
        if (oldest !== undefined) windows.delete(oldest);
      }
      windows.set(client, { startedAt: now(), failures: 1 });
    },
  };
}
