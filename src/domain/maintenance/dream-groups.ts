import type { Reflection } from "../contracts/index.js";
import { computeErrorSignature } from "../signature.js";

/** A stored, high-importance reflection that dreaming may draw a pattern from. */
export interface DreamSource {
  id: string;
  projectId: string;
  signature: string;
  signatureType: string;
  occurrences: number;
  reflection: Reflection;
}

export interface DreamGroup {
  /** `category:<error category>`, or `type:<signature type>` for reflections without a category. */
  key: string;
  /** What the group is about, for texts: the category or signature type. */
  label: string;
  /** The pattern's signature: stable per (tenant, key), so reruns find the pattern again. */
  signature: string;
  /** Sorted by id, so the same inputs always give the same group. */
  sources: DreamSource[];
}

/** Groups smaller than this hold no pattern, only a lesson: a pattern is what *several* lessons share. */
export const minDreamGroupSize = 2;

export function patternSignature(key: string): string {
  return computeErrorSignature("pattern", key);
}

/**
 * Groups sources by error category (the failure family the generator classified), falling back
 * to the error-signature type. Categories are coarser than signatures on purpose: a pattern is
 * what several different signatures have in common.
 */
export function groupForDreaming(sources: readonly DreamSource[], minSize = minDreamGroupSize): DreamGroup[] {
  const byKey = new Map<string, { label: string; sources: DreamSource[] }>();
  for (const source of sources) {
    const category = source.reflection.errorCategory;
    const key = category ? `category:${category}` : `type:${source.signatureType}`;
    const label = category ?? source.signatureType;
    const group = byKey.get(key) ?? { label, sources: [] };
    group.sources.push(source);
    byKey.set(key, group);
  }
  return [...byKey]
    .filter(([, g]) => g.sources.length >= minSize)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, g]) => ({
      key,
      label: g.label,
      signature: patternSignature(key),
      sources: [...g.sources].sort((a, b) => a.id.localeCompare(b.id)),
    }));
}

/** True when a stored pattern was drawn from exactly this group's sources: nothing to redo. */
export function sameSources(group: DreamGroup, storedSourceIds: readonly string[]): boolean {
  const ids = group.sources.map((s) => s.id);
  const stored = [...storedSourceIds].sort((a, b) => a.localeCompare(b));
  return ids.length === stored.length && ids.every((id, i) => id === stored[i]);
}

/** The group's sources as one text: the "task" a pattern lesson must be relevant to. */
export function groupText(group: DreamGroup): string {
  return group.sources.map((s) => `${s.reflection.reflectionText}\n${s.reflection.learning}`).join("\n");
}
