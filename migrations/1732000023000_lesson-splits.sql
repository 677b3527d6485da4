-- Up Migration

-- The audit of lesson splits: every split of a merged lesson (POST /api/v1/reflections/{id}/split,
-- `reflector split`) is recorded in the transaction that makes it, with who asked, when, which
-- source failures moved and their signatures, from which lesson to which (none when they went back
-- to unassigned). Read with GET /api/v1/reflections/splits or `reflector splits`. No foreign key:
-- the record of a split outlives the lessons it names.
CREATE TABLE lesson_splits (
  id                 uuid PRIMARY KEY,
  tenant_id          text NOT NULL,
  reflection_id      uuid NOT NULL,
  new_reflection_id  uuid,
  target             text NOT NULL CHECK (target IN ('new_lesson', 'unassigned')),
  moved_event_ids    text[] NOT NULL CHECK (cardinality(moved_event_ids) > 0),
  moved_signatures   text[] NOT NULL DEFAULT '{}',
  remaining_sources  integer NOT NULL CHECK (remaining_sources >= 1),
  actor              text NOT NULL,
  split_at           timestamptz NOT NULL DEFAULT now(),
  CHECK ((target = 'new_lesson') = (new_reflection_id IS NOT NULL))
);
CREATE INDEX lesson_splits_tenant_at_idx ON lesson_splits (tenant_id, split_at DESC, id);
CREATE INDEX lesson_splits_tenant_reflection_idx ON lesson_splits (tenant_id, reflection_id);
CREATE INDEX lesson_splits_tenant_new_reflection_idx ON lesson_splits (tenant_id, new_reflection_id);

-- Down Migration
DROP TABLE lesson_splits;
