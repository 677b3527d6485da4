-- Up Migration

-- An operator's approval of a lesson for wide serving: with LESSONS_SERVE_MIN_OCCURRENCES above 1,
-- lessons for a task serve a lesson to other tasks once enough failures were filed under it, or
-- once an operator approved it (POST /api/v1/reflections/{id}/approve). Who approved it is the
-- audit's keyed fingerprint of the API key, never the key. The update moves `updated_at` (its
-- trigger), so the lessons index reads the approval at its next refresh.
ALTER TABLE reflections ADD COLUMN approved_at timestamptz;
ALTER TABLE reflections ADD COLUMN approved_by text;

-- Down Migration
ALTER TABLE reflections DROP COLUMN approved_by;
ALTER TABLE reflections DROP COLUMN approved_at;
