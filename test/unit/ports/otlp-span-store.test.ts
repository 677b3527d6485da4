import { otlpSpanStoreContract } from "../../contract/otlp-span-store.contract.js";
import { createFakeSpanStore } from "../../support/fake-span-store.js";

// The in-memory span store, held to the port's contract.
otlpSpanStoreContract("in-memory fake", () => createFakeSpanStore().store);
