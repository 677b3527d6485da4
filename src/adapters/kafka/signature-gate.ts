/**
 * Single flight per new signature: while the first event of a signature this instance has not
 * finished yet is being reflected on, later events with that signature wait, so they find the
 * stored lesson instead of calling the generator again. Once one has finished, nothing waits.
 * `known` is an LRU of finished signatures, bounded by `capacity`.
 */
export class SignatureGate {
  private readonly running = new Map<string, number>();
  private readonly known = new Map<string, true>();
  constructor(private readonly capacity: number) {}

  canStart(signature: string): boolean {
    return this.known.has(signature) || !this.running.has(signature);
  }

  started(signature: string): void {
    this.running.set(signature, (this.running.get(signature) ?? 0) + 1);
  }

  finished(signature: string): void {
    const left = (this.running.get(signature) ?? 1) - 1;
    if (left > 0) this.running.set(signature, left);
    else this.running.delete(signature);
    this.known.delete(signature);
    this.known.set(signature, true);
    if (this.known.size > this.capacity) {
      const oldest = this.known.keys().next();
      if (!oldest.done) this.known.delete(oldest.value);
    }
  }
}
