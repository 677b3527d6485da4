/**
 * The composition root lives in src/composition/ (composition/app.ts); this entry keeps the
 * old import path for the benchmarks that name it. It only re-exports: wire nothing here.
 */
export * from "./composition/app.js";
