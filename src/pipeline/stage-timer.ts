/** Times a pipeline stage; the observability layer implements it so stages never see prom-client. */
export interface StageTimer {
  time<T>(stage: string, work: () => Promise<T>): Promise<T>;
}

export const untimed: StageTimer = { time: (_stage, work) => work() };
