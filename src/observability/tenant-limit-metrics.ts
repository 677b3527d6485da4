import { Counter, type Registry } from "prom-client";

/**
 * New lessons refused by the tenant's LESSONS_NEW_PER_MINUTE (published, not stored). No tenant
 * label: a flood of tenant ids must not grow the metric; the log line names the tenant.
 */
export function countRefusedNewLessons(
  registry: Registry,
  log?: { warn(obj: object, msg: string): void },
): (tenantId: string) => void {
  const refused = new Counter({
    name: "reflector_new_lessons_over_limit_total",
    help: "New lessons judged worth storing but not stored: the tenant stored LESSONS_NEW_PER_MINUTE new lessons this minute (the reflection is still published).",
    registers: [registry],
  });
  return (tenantId) => {
    refused.inc();
    log?.warn({ tenantId }, "new lesson not stored: the tenant is past LESSONS_NEW_PER_MINUTE");
  };
}
