/** Where a partition's log stood at a moment: the first offset whose timestamp is ≥ `timeMs`. */
export interface OffsetAtTime {
  timeMs: number;
  offset: number;
}

/** Ages probed in the broker's time index (seconds before now): a ladder from 1 s to 7 days. */
export const probeAgesSeconds = [
  1, 2, 5, 10, 30, 60, 120, 300, 600, 1_800, 3_600, 7_200, 21_600, 86_400, 259_200, 604_800,
] as const;

/**
 * Age of the oldest unconsumed message (the one at `nextOffset`, the committed offset), from the
 * broker's time index: probe `offsetAt(now − age)` for each age of the ladder, find the two probes
 * that bracket the message and interpolate linearly between them — the method of Lightbend's
 * kafka-lag-exporter, with the broker's index in place of a history kept in memory, so a process
 * that just started (or the CLI) answers at once. It costs one ListOffsets per probe and topic and
 * fetches no message. Returns 0 when nothing is pending, the oldest probed age when the message is
 * older than the ladder (a lower bound), and null without probes.
 */
export function estimateLagSeconds(
  nextOffset: number,
  logEndOffset: number,
  probes: readonly OffsetAtTime[],
  nowMs: number,
): number | null {
  if (nextOffset >= logEndOffset) return 0;
  if (probes.length === 0) return null;
  // The log end is where the log stands now: the newest point of the curve.
  const curve = [...probes, { timeMs: nowMs, offset: logEndOffset }].sort((a, b) => a.timeMs - b.timeMs);
  const oldest = curve[0];
  if (!oldest) return null;
  // Offsets below offsetAt(T) were appended before T; still above the message: older than the ladder.
  if (oldest.offset > nextOffset) return (nowMs - oldest.timeMs) / 1000;
  let before = oldest;
  for (const point of curve) {
    if (point.offset > nextOffset) {
      // The message was appended between `before.timeMs` and `point.timeMs`, at the moment the
      // log end passed it (reached nextOffset + 1); the log end is taken to grow linearly between.
      const fraction = (nextOffset + 1 - before.offset) / (point.offset - before.offset);
      const appendedAtMs = before.timeMs + fraction * (point.timeMs - before.timeMs);
      return Math.max(0, (nowMs - appendedAtMs) / 1000);
    }
    before = point;
  }
  return 0;
}
