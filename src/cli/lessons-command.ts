import type { Command } from "commander";
import { createReflectorClient, ReflectorApiError, type Lesson, type StoredLesson } from "../client/index.js";

/**
 * `reflector lessons`: the tenant's lessons from the shell, over the HTTP API (the API key names
 * the tenant): those that apply to a task (`--task`, by meaning), or a search by words and tags.
 */

export interface LessonsOptions {
  url: string;
  key?: string;
  task?: string;
  q?: string;
  tags?: string;
  project?: string;
  tools?: string;
  limit?: number;
  json: boolean;
}

interface Printed {
  lines: string[];
  json: unknown;
}

function taskLines(
  lessons: readonly Lesson[],
  floor: number,
  checkedBy: "model" | "meaning" | undefined,
): string[] {
  if (lessons.length === 0)
    return [
      checkedBy === "model"
        ? "no lesson applies, as the model read the nearest ones"
        : `no lesson applies above the relevance floor (${floor.toFixed(2)})`,
    ];
  const chosen = checkedBy === "model" ? ["chosen by the model among the nearest in meaning:"] : [];
  return chosen.concat(
    lessons.flatMap((l, i) => [
      `${String(i + 1)}. ${l.reflectionId}  relevance ${(l.relevance ?? 0).toFixed(2)}  quality ${(l.effectiveQuality ?? 0).toFixed(2)}`,
      `   ${l.prompt}`,
    ]),
  );
}

function searchLines(items: readonly StoredLesson[], next: number | null): string[] {
  if (items.length === 0) return ["no lesson found"];
  const lines = items.flatMap((item, i) => [
    `${String(i + 1)}. ${item.id}  [${item.tags?.join(", ") ?? ""}]  quality ${(item.effectiveQuality ?? 0).toFixed(2)}${item.served === false ? "  (withheld)" : ""}`,
    `   ${[item.strategyText, item.learning, item.reflectionText].find((t) => typeof t === "string") ?? ""}`,
  ]);
  if (next !== null) lines.push(`… more: --offset ${String(next)}`);
  return lines;
}

export async function lessonsOutput(
  options: LessonsOptions & { offset?: number },
  fetchImpl?: typeof fetch,
): Promise<Printed> {
  const apiKey = options.key ?? process.env.REFLECTOR_API_KEY;
  if (!apiKey) throw new LessonsUsageError("an API key is needed: --key or REFLECTOR_API_KEY");
  const client = createReflectorClient({
    baseUrl: options.url,
    apiKey,
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  const list = (csv: string | undefined) =>
    csv
      ?.split(",")
      .map((t) => t.trim())
      .filter(Boolean);
  if (options.task !== undefined) {
    const tools = list(options.tools);
    const answer = await client.lessonsForTask({
      task: options.task,
      ...(options.project ? { projectId: options.project } : {}),
      ...(tools?.length ? { tools } : {}),
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
    });
    return { lines: taskLines(answer.lessons, answer.floor, answer.checkedBy), json: answer };
  }
  const tags = list(options.tags);
  const answer = await client.listReflections({
    ...(options.q ? { q: options.q } : {}),
    ...(tags?.length ? { tags } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(options.offset !== undefined ? { offset: options.offset } : {}),
  });
  return { lines: searchLines(answer.items, answer.nextOffset), json: answer };
}

export class LessonsUsageError extends Error {}

export function registerLessonsCommand(program: Command): void {
  program
    .command("lessons")
    .description(
      "list and search the tenant's lessons over the HTTP API (--task: the lessons that apply to a task)",
    )
    .option("--url <url>", "Reflector's HTTP API", process.env.REFLECTOR_URL ?? "http://127.0.0.1:8080")
    // The key's value is read when the command runs, never as a default: help would print it.
    .option("--key <key>", "an API key with the read role (default REFLECTOR_API_KEY)")
    .option(
      "--task <text>",
      "what the agent is about to do: the lessons that apply (by meaning, or by the model when the server checks with one)",
    )
    .option("--tools <list>", "with --task: comma-separated tools the agent will use")
    .option("--project <projectId>", "with --task: only this project's lessons")
    .option("--q <words>", "words that must all appear")
    .option("--tags <list>", "comma-separated tags that must all match")
    .option("--limit <n>", "at most this many", Number)
    .option("--offset <n>", "skip this many (search only)", Number)
    .option("--json", "print the answer as JSON (camelCase keys)", false)
    .action(async (options: LessonsOptions & { offset?: number }) => {
      try {
        const printed = await lessonsOutput(options);
        console.log(options.json ? JSON.stringify(printed.json, null, 2) : printed.lines.join("\n"));
      } catch (err) {
        if (err instanceof LessonsUsageError || err instanceof ReflectorApiError) {
          process.stderr.write(`reflector lessons: ${err.message}\n`);
          process.exitCode = 2;
          return;
        }
        process.stderr.write(`reflector lessons: ${options.url} did not answer: ${(err as Error).message}\n`);
        process.exitCode = 1;
      }
    });
}
