/**
 * `work`'s value, or `late` once `ms` have passed, whichever comes first. The work is not
 * cancelled (whoever started it ends it); the timer is cleared either way, so nothing is left
 * pending. Rejections of `work` before the deadline pass through.
 */
export async function within<T, L>(work: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<L>((resolve) => {
    timer = setTimeout(() => {
      resolve(late);
    }, ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
