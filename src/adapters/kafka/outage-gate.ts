import type { FailureCode } from "./failure-policy.js";

export interface OutageGateHooks {
  /** A dependency went down: stop fetching (pause the topics) and record it. */
  onEnter(code: FailureCode): void;
  /** It came back after `pausedMs`: resume fetching. */
  onLeave(code: FailureCode, pausedMs: number): void;
}

/**
 * While a dependency is down, the consumer starts nothing new and fetches nothing new. The first
 * event that meets the outage closes the gate; the first success after it opens the gate again.
 */
export class OutageGate {
  private current: { code: FailureCode; since: number } | null = null;
  constructor(
    private readonly hooks: OutageGateHooks,
    private readonly now: () => number = Date.now,
  ) {}

  get closed(): boolean {
    return this.current !== null;
  }

  enter(code: FailureCode): void {
    if (this.current) return;
    this.current = { code, since: this.now() };
    this.hooks.onEnter(code);
  }

  leave(): void {
    if (!this.current) return;
    const { code, since } = this.current;
    this.current = null;
    this.hooks.onLeave(code, this.now() - since);
  }
}
