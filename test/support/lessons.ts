import type { LessonVectorRow } from "../../src/features/lessons/lessons-for-task-index.js";
import { unitVector, type IndexedLesson } from "../../src/features/lessons/lessons-for-task-rank.js";

/** The moment the lesson builders date their lessons at. */
export const lessonsNow = new Date("2026-11-26T12:00:00Z");

/** A stored lesson as Postgres hands it to the lessons index: served, importance 0.8, seen now. */
export function lessonRow(
  id: string,
  vector: readonly number[],
  over: Partial<LessonVectorRow> = {},
): LessonVectorRow {
  return {
    id,
    projectId: "p",
    strategyText: `strategy of ${id}`,
    learning: "learning",
    adjustments: [],
    tags: [],
    importance: 0.8,
    effectiveQuality: 0.8,
    createdAt: lessonsNow,
    lastSeenAt: lessonsNow,
    updatedAt: lessonsNow,
    vector: [...vector],
    ...over,
  };
}

/** The same lesson as the index holds it, with its vector of unit length. */
export function indexedLesson(
  id: string,
  vector: readonly number[],
  over: Partial<IndexedLesson> = {},
): IndexedLesson {
  const { updatedAt: _updatedAt, vector: _vector, ...rest } = lessonRow(id, vector);
  return { ...rest, vector: unitVector(vector) ?? new Float32Array(), ...over };
}
