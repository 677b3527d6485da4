/** Per request: `ok` the endpoint answered; `retryableFailure` it is (perhaps briefly) unusable. */
export type LlmCallOutcome = "ok" | "retryableFailure" | "failure";

export type CircuitState = "closed" | "open" | "half-open";

/** What the breaker counts: an HTTP outcome, or an answer that arrived but was unusable. */
export type BreakerOutcome = LlmCallOutcome | "invalidOutput";

export interface CircuitBreakerOptions {
  /**
   * Consecutive failures that open the circuit: retryable request failures (timeouts, 5xx, 429,
   * refused) and unusable answers (garbage, truncated or schema-violating output).
   */
  failureThreshold: number;
  /** How long the circuit stays open before one probe request may try the endpoint again. */
  openMs: number;
  now?: () => number;
  /** Told about every state change, with how long the circuit was open when it closes. */
  onChange?: (change: { state: CircuitState; openForMs: number | null }) => void;
}

/**
 * One breaker per LLM endpoint, shared by every in-flight event. Without it, each of the (up to
 * 64) held events keeps sending requests into an outage on its own backoff; with it, the endpoint
 * gets one probe per `openMs` and the held events fail fast with `LLM_CIRCUIT_OPEN`, which the
 * consumer treats as an outage (pause, no attempts spent, nothing committed past them).
 *
 * Retryable failures and unusable answers count; a 400 does not. One bad answer among good ones
 * is the event's problem (any success resets the count), and it spends that event's attempts;
 * a run of bad answers across events is the endpoint's (a broken deployment, a proxy answering
 * with HTML), and without the breaker it would spend every event's attempts and push them through
 * the retry topic into the DLQ. A request that started before the circuit opened and succeeds
 * afterwards closes it: the endpoint answered.
 */
export function createCircuitBreaker(options: CircuitBreakerOptions) {
  const now = options.now ?? Date.now;
  let state: CircuitState = "closed";
  let failures = 0;
  let openedAt = 0;
  let firstOpenedAt = 0;
  let probeInFlight = false;

  function change(next: CircuitState, openForMs: number | null): void {
    state = next;
    options.onChange?.({ state: next, openForMs });
  }

  return {
    state: (): CircuitState => {
      if (state === "open" && now() - openedAt >= options.openMs) return "half-open";
      return state;
    },

    /** True if a request may go out now; in half-open, only one (the probe) at a time. */
    tryAcquire(): boolean {
      if (state === "closed") return true;
      if (state === "open") {
        if (now() - openedAt < options.openMs) return false;
        change("half-open", null);
      }
      if (probeInFlight) return false;
      probeInFlight = true;
      return true;
    },

    /** After every request that was let through. */
    record(outcome: BreakerOutcome): void {
      if (state === "half-open") probeInFlight = false;
      if (outcome === "ok") {
        failures = 0;
        if (state !== "closed") change("closed", now() - firstOpenedAt);
        return;
      }
      if (outcome === "failure") return;
      failures += 1;
      if (state === "half-open") {
        openedAt = now();
        change("open", null);
      } else if (state === "closed" && failures >= options.failureThreshold) {
        openedAt = now();
        firstOpenedAt = openedAt;
        change("open", null);
      }
    },
  };
}

export type CircuitBreaker = ReturnType<typeof createCircuitBreaker>;
