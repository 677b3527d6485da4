import pg from "pg";
import { afterAll, inject } from "vitest";
import { createPgReflectionStore } from "../../src/adapters/postgres/pg-reflection-store.js";
import { reflectionStoreContract } from "../contract/reflection-store.contract.js";

// The Postgres store, as the processor uses it, held to the port's contract.
const pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 4 });
const store = createPgReflectionStore(pool, { embeddingModel: "contract-embedder" });
afterAll(() => pool.end());

reflectionStoreContract("Postgres", () => store);
