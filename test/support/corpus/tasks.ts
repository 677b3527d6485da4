import { type Actor, type DetourKind, type PlanSheet, type StepSpec } from "./builder.js";
import { int, pick, type Rng } from "./random.js";
import {
  defineFamily,
  unknownMode,
  type AnyFamily,
  type BuildContext,
  type Domain,
  type Scenario,
} from "./scenario.js";
import { personName, placeName } from "./text.js";

/** Families whose steps are written per failure mode: coding, data analysis, planning. */

export interface Core {
  core: StepSpec[];
  answer: string;
  finalInCore?: boolean;
}

export interface TaskSpec<V> {
  id: string;
  domain: Domain;
  style: "magentic" | "groupchat";
  team: Actor[];
  topic: string;
  variants: readonly V[];
  modes: readonly [string, string, string];
  file: (v: V) => string;
  question: (v: V, wording: number) => string;
  sheet: (v: V) => PlanSheet;
  opening: (v: V, ctx: BuildContext) => StepSpec[];
  cores: Record<string, (v: V, ctx: BuildContext) => Core>;
  detourKind?: DetourKind;
}

export function taskFamily<V>(spec: TaskSpec<V>): AnyFamily {
  return defineFamily<V>({
    id: spec.id,
    domain: spec.domain,
    modes: spec.modes,
    variants: spec.variants,
    build(mode, v, ctx): Scenario {
      const make = spec.cores[mode];
      if (!make) return unknownMode(spec.id, mode);
      const { core, answer, finalInCore } = make(v, ctx);
      const defaultKind = spec.domain === "planning" ? "web" : spec.domain === "data" ? "file" : "code";
      // Nothing to scroll through in a file that never opened.
      const kind: DetourKind = ctx.mode === "file-unreadable" ? "code" : (spec.detourKind ?? defaultKind);
      return {
        question: spec.question(v, ctx.wording),
        answer,
        style: spec.style,
        team: spec.team,
        sheet: spec.sheet(v),
        opening: spec.opening(v, ctx),
        core,
        ...(finalInCore ? { finalInCore } : {}),
        detourKind: kind,
        detourCtx:
          kind === "web"
            ? {
                topic: spec.topic,
                site: `${spec.topic} - Search`,
                url: `https://www.bing.com/search?q=${encodeURIComponent(spec.topic)}`,
              }
            : {
                topic: spec.topic,
                site: spec.file(v),
                url: `file:///workspace/${spec.file(v)}`,
                file: spec.file(v),
              },
      };
    },
  });
}

export const py = (code: string, lead = "Here is the script.") =>
  `${lead}\n\n\`\`\`python\n${code.trim()}\n\`\`\``;
export const sh = (code: string, lead = "Run this.") => `${lead}\n\n\`\`\`sh\n${code.trim()}\n\`\`\``;

export function traceback(frames: [string, number, string, string][], error: string): string {
  return [
    "Traceback (most recent call last):",
    ...frames.flatMap(([file, line, fn, text]) => [
      `  File "${file}", line ${line}, in ${fn}`,
      `    ${text}`,
    ]),
    error,
  ].join("\n");
}

/** Lines of a CSV (or log) until about `chars` characters. */
export function bulkLines(
  rng: Rng,
  header: string | null,
  row: (rng: Rng, i: number) => string,
  chars: number,
): string {
  const lines = header ? [header] : [];
  let size = header?.length ?? 0;
  for (let i = 0; size < chars; i += 1) {
    const line = row(rng, i);
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

export const people = (rng: Rng, n: number) => Array.from({ length: n }, () => personName(rng));
export const places = (rng: Rng, n: number) => Array.from({ length: n }, () => placeName(rng));

/** The file, converted to text by FileSurfer, big or small. */
export function fileView(rng: Rng, file: string, body: string, page = 1, pages = 1): string {
  return `Address: file:///workspace/${file}\nTitle: ${file}\nViewport position: Showing page ${page} of ${pages}.\n=======================\n${body}\n${pick(rng, ["", "", "(end of viewport)"])}`;
}

export function amount(rng: Rng, min: number, max: number): number {
  return int(rng, min * 100, max * 100) / 100;
}
