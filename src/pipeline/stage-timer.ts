/** What a stage is about, for its trace span: ids, signature, verdict. Never prompt text or secrets. */
export type StageAttributes = Readonly<Record<string, string | number | boolean | null | undefined>>;

export interface StageDescription<T> {
  /** Known before the stage runs. */
  attributes?: StageAttributes;
  /** What the stage's result says (a verdict, a decision). */
  outcome?: (result: T) => StageAttributes;
}

/**
 * Times a pipeline stage; the observability layer implements it (a histogram, and a trace span
 * when tracing is on), so stages never see prom-client or OpenTelemetry.
 */
export interface StageTimer {
  time<T>(stage: string, work: () => Promise<T>, describe?: StageDescription<T>): Promise<T>;
}

export const untimed: StageTimer = { time: (_stage, work) => work() };
