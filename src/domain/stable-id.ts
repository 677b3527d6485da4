import { createHash } from "node:crypto";

/**
 * A UUID-shaped id derived from its parts, so that the same input always yields the same id:
 * a replayed event republishes the same outcome id, and a reflection's id follows from
 * (tenant, signature) whether Postgres or a rebuilt Redis answers first.
 */
export function stableId(...parts: string[]): string {
  const hex = createHash("sha256").update(parts.join("\u0000"), "utf8").digest("hex");
  // Version 8 (custom) with the RFC 9562 variant bits.
  const variant = ((parseInt(hex.charAt(16), 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
