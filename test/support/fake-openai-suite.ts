import { afterAll, afterEach, beforeAll } from "vitest";
import { startFakeOpenAiServer, type FakeOpenAiServer } from "./fake-openai-server.js";

/**
 * One local OpenAI-compatible server for a test file: started before its tests, closed after
 * them, its scripts and recorded requests reset after each test. Call at the top of the file; the
 * returned function gives the running server.
 */
export function useFakeOpenAiServer(): () => FakeOpenAiServer {
  let fake: FakeOpenAiServer | undefined;
  beforeAll(async () => {
    fake = await startFakeOpenAiServer();
  });
  afterAll(async () => {
    await fake?.close();
  });
  afterEach(() => {
    fake?.reset();
  });
  return () => {
    if (!fake) throw new Error("the fake OpenAI server is not running: use it inside a test");
    return fake;
  };
}
