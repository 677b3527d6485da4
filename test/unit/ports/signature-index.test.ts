import { signatureIndexContract } from "../../contract/signature-index.contract.js";
import { createFakeIndex } from "../../support/fakes.js";

// The in-memory index the processor's unit tests use, held to the port's contract.
signatureIndexContract("in-memory fake", () => createFakeIndex().index);
