/**
 * The ids of a tenant's lessons that the index knows but does not hold (the tenant is over its
 * share of `LESSONS_INDEX_MAX_BYTES`), kept as 64-bit fingerprints in one open-addressed table
 * instead of a `Set` of strings: about 16 bytes an id instead of about 93 measured, so that a
 * tenant of a million lessons spends its share on lessons it can serve rather than on the ids of
 * those it cannot.
 *
 * Two ids with the same fingerprint count once. The set is only counted and asked whether an id
 * is in it; at a million ids the chance of any such pair is about 3 in 100 million, and its one
 * effect would be a count one short, which makes the next refresh read the tenant again in full.
 */

/** 64-bit FNV-1a over the id's UTF-16 code units, as two 32-bit halves; never 0/0 (the empty slot). */
function fingerprint(id: string): [number, number] {
  // The 64-bit offset basis and prime, as 16-bit limbs (Math.imul keeps the products exact).
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (let i = 0; i < id.length; i += 1) {
    h0 ^= id.charCodeAt(i);
    // × 0x00000100000001b3: limbs 0x01b3, 0x0000, 0x0100, 0x0000.
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3;
    const t2 = h2 * 0x1b3 + (h0 << 8);
    const t3 = h3 * 0x1b3 + (h1 << 8);
    const c1 = t1 + (t0 >>> 16);
    const c2 = t2 + (c1 >>> 16);
    h0 = t0 & 0xffff;
    h1 = c1 & 0xffff;
    h2 = c2 & 0xffff;
    h3 = (t3 + (c2 >>> 16)) & 0xffff;
  }
  const hi = ((h3 << 16) | h2) >>> 0;
  const lo = ((h1 << 16) | h0) >>> 0;
  return hi === 0 && lo === 0 ? [0, 1] : [hi, lo];
}

const minCapacity = 16;

export class CompactIdSet {
  private hi = new Uint32Array(minCapacity);
  private lo = new Uint32Array(minCapacity);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Estimated heap bytes: the two tables. */
  bytes(): number {
    return this.hi.byteLength + this.lo.byteLength;
  }

  /** The slot holding `id`'s fingerprint, or the empty slot where it would go. */
  private slotOf(hi: number, lo: number): number {
    const mask = this.hi.length - 1;
    let slot = (lo ^ Math.imul(hi, 0x9e3779b1)) & mask;
    while (this.hi[slot] !== 0 || this.lo[slot] !== 0) {
      if (this.hi[slot] === hi && this.lo[slot] === lo) return slot;
      slot = (slot + 1) & mask;
    }
    return slot;
  }

  has(id: string): boolean {
    const [hi, lo] = fingerprint(id);
    const slot = this.slotOf(hi, lo);
    return this.hi[slot] === hi && this.lo[slot] === lo;
  }

  add(id: string): this {
    const [hi, lo] = fingerprint(id);
    const slot = this.slotOf(hi, lo);
    if (this.hi[slot] === hi && this.lo[slot] === lo) return this;
    this.hi[slot] = hi;
    this.lo[slot] = lo;
    this.count += 1;
    // At most half full, so that a probe stays short.
    if (this.count * 2 > this.hi.length) this.resize(this.hi.length * 2);
    return this;
  }

  delete(id: string): boolean {
    const [hi, lo] = fingerprint(id);
    const mask = this.hi.length - 1;
    let slot = this.slotOf(hi, lo);
    if (this.hi[slot] !== hi || this.lo[slot] !== lo) return false;
    // Backward-shift deletion: entries after the hole that probed past it move back into it.
    for (let next = (slot + 1) & mask; this.hi[next] !== 0 || this.lo[next] !== 0; next = (next + 1) & mask) {
      const home = ((this.lo[next] ?? 0) ^ Math.imul(this.hi[next] ?? 0, 0x9e3779b1)) & mask;
      // The entry at `next` may fill the hole when its home is not cyclically in (slot, next].
      const between = slot <= next ? home > slot && home <= next : home > slot || home <= next;
      if (between) continue;
      this.hi[slot] = this.hi[next] ?? 0;
      this.lo[slot] = this.lo[next] ?? 0;
      slot = next;
    }
    this.hi[slot] = 0;
    this.lo[slot] = 0;
    this.count -= 1;
    if (this.hi.length > minCapacity && this.count * 8 < this.hi.length) this.resize(this.hi.length / 2);
    return true;
  }

  private resize(capacity: number): void {
    const { hi, lo } = this;
    this.hi = new Uint32Array(capacity);
    this.lo = new Uint32Array(capacity);
    for (let i = 0; i < hi.length; i += 1) {
      const h = hi[i] ?? 0;
      const l = lo[i] ?? 0;
      if (h === 0 && l === 0) continue;
      const slot = this.slotOf(h, l);
      this.hi[slot] = h;
      this.lo[slot] = l;
    }
  }
}
