import { z } from "zod";

/** How a process starts and stops. */
export const lifecycleEnv = {
  SHUTDOWN_DEADLINE_MS: z.coerce.number().int().min(1000).default(25_000),
  /** Wall time a start spends compiling the offline path and opening connections first; 0 = none. */
  START_WARM_UP_MS: z.coerce.number().int().min(0).max(60_000).default(1_000),
};

export interface LifecycleConfig {
  shutdownDeadlineMs: number;
  /** `START_WARM_UP_MS` (src/composition/warm-up.ts). */
  startWarmUpMs: number;
}

export function lifecycleOf(e: { SHUTDOWN_DEADLINE_MS: number; START_WARM_UP_MS: number }): LifecycleConfig {
  return { shutdownDeadlineMs: e.SHUTDOWN_DEADLINE_MS, startWarmUpMs: e.START_WARM_UP_MS };
}
