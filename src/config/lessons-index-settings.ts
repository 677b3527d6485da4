import { z } from "zod";

/**
 * The in-process index of lessons for a task (src/features/lessons/lessons-for-task-index.ts):
 * how many bytes of lessons it may hold, and from how many lessons a tenant is ranked over a
 * coarse index. The defaults (200 MiB; 20,000 lessons, 4,000 looked at) are the index's own
 * (`defaultIndexMaxBytes`, `coarseDefaults`, where their measurements are given); the config
 * names them again because the config does not import the features.
 */
export const lessonsIndexEnv = {
  /** Estimated bytes of lessons held in memory for lessons-for-task, all tenants; 16 MiB–64 GiB. */
  LESSONS_INDEX_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(16 * 1024 * 1024)
    .max(64 * 1024 ** 3)
    .default(200 * 1024 * 1024),
  /**
   * Lessons a tenant holds from which it is ranked over a coarse index (clusters nearest the task)
   * instead of one exact pass over all; 1,000–100,000,000.
   */
  LESSONS_INDEX_COARSE_MIN_LESSONS: z.coerce.number().int().min(1_000).max(100_000_000).default(20_000),
  /** Lessons a coarse pass looks at (whole clusters, until past this many) before it answers with the best found; 500–10,000,000. */
  LESSONS_INDEX_COARSE_SCAN_ROWS: z.coerce.number().int().min(500).max(10_000_000).default(4_000),
};

export interface LessonsIndexConfig {
  /** `LESSONS_INDEX_MAX_BYTES`. */
  lessonsIndexMaxBytes: number;
  /** `LESSONS_INDEX_COARSE_MIN_LESSONS` and `LESSONS_INDEX_COARSE_SCAN_ROWS`. */
  lessonsIndexCoarse: { minLessons: number; scanRows: number };
}

export function lessonsIndexOf(e: {
  LESSONS_INDEX_MAX_BYTES: number;
  LESSONS_INDEX_COARSE_MIN_LESSONS: number;
  LESSONS_INDEX_COARSE_SCAN_ROWS: number;
}): LessonsIndexConfig {
  return {
    lessonsIndexMaxBytes: e.LESSONS_INDEX_MAX_BYTES,
    lessonsIndexCoarse: {
      minLessons: e.LESSONS_INDEX_COARSE_MIN_LESSONS,
      scanRows: e.LESSONS_INDEX_COARSE_SCAN_ROWS,
    },
  };
}
