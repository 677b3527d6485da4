-- Up Migration
-- Which embedder wrote each reflection's vector. Vectors of different embedders (the offline
-- hashing one, an embeddings model) have different dimensions and meanings: novelty compares a
-- new reflection only with stored ones from the same embedder. Rows before this column were all
-- written by the offline hashing embedder.
ALTER TABLE reflections ADD COLUMN embedding_model text NOT NULL DEFAULT 'hashing-256';
CREATE INDEX reflections_tenant_embedding_model ON reflections (tenant_id, embedding_model);

-- Down Migration
DROP INDEX reflections_tenant_embedding_model;
ALTER TABLE reflections DROP COLUMN embedding_model;
