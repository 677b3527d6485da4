import { z } from "zod";

/**
 * The in-process index of lessons for a task (src/features/lessons/lessons-for-task-index.ts):
 * how many bytes of lessons it may hold. The default, 200 MiB, is the index's own
 * (`defaultIndexMaxBytes`, where its measurement is given); the config names it again because the
 * config does not import the features.
 */
export const lessonsIndexEnv = {
  /** Estimated bytes of lessons held in memory for lessons-for-task, all tenants; 16 MiB–64 GiB. */
  LESSONS_INDEX_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(16 * 1024 * 1024)
    .max(64 * 1024 ** 3)
    .default(200 * 1024 * 1024),
};

export interface LessonsIndexConfig {
  /** `LESSONS_INDEX_MAX_BYTES`. */
  lessonsIndexMaxBytes: number;
}

export function lessonsIndexOf(e: { LESSONS_INDEX_MAX_BYTES: number }): LessonsIndexConfig {
  return { lessonsIndexMaxBytes: e.LESSONS_INDEX_MAX_BYTES };
}
