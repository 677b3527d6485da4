/**
 * Messages carry ids, timestamps and counts that differ between two occurrences of the same
 * failure; left in, no two timeouts would share a signature and nothing would ever dedupe.
 */
export function maskVolatileTokens(text: string): string {
  return text
    .replace(/\b\d{4}-\d{2}-\d{2}[t ][\d:.]+(z|[+-]\d{2}:?\d{2})?/gi, "<time>")
    .replace(/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>")
    .replace(/\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b/gi, "<hex>")
    .replace(/(?<![a-z_])\d+(\.\d+)?/gi, "<n>")
    .replace(/\s+/g, " ");
}
