import { reflectionStoreContract } from "../../contract/reflection-store.contract.js";
import { createFakeStore } from "../../support/fakes.js";

// The in-memory store the processor's unit tests use, held to the port's contract.
reflectionStoreContract("in-memory fake", () => createFakeStore().store);
