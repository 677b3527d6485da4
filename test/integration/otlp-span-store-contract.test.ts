import pg from "pg";
import { afterAll, inject } from "vitest";
import { createPgOtlpSpanStore } from "../../src/adapters/postgres/pg-otlp-span-store.js";
import { otlpSpanStoreContract } from "../contract/otlp-span-store.contract.js";

// The Postgres span store, as the OTLP bridge uses it, held to the port's contract.
const pool = new pg.Pool({ connectionString: inject("databaseUrl"), max: 4 });
afterAll(() => pool.end());

otlpSpanStoreContract("Postgres", () => createPgOtlpSpanStore(pool));
