/**
 * New lessons of one signature are written one at a time in a process. Events of one tenant are
 * processed concurrently (up to the consumer's in-flight limit), and a burst of failures under one
 * signature would otherwise all find no lesson, each write one, and the store would keep the first
 * and count every other as an occurrence of it, whatever its cause. An event about to write the
 * first lesson of a signature holds it until its commit; an event that finds it held waits for that
 * commit and matches again: the stored lesson is reused if it fits, and another cause goes on to a
 * more specific signature, as it would have had the events come one after another.
 */
export function createSignatureFlights() {
  const flights = new Map<string, Promise<undefined>>();
  return {
    /**
     * Holds `key` and returns its release, or, when another event holds it, waits for that one to
     * finish and returns null (the caller matches again).
     */
    async claim(key: string): Promise<(() => void) | null> {
      const held = flights.get(key);
      if (held) {
        await held;
        return null;
      }
      let release: (value: undefined) => void = () => undefined;
      const done = new Promise<undefined>((resolve) => {
        release = resolve;
      });
      flights.set(key, done);
      return () => {
        if (flights.get(key) === done) flights.delete(key);
        release(undefined);
      };
    },
  };
}

export type SignatureFlights = ReturnType<typeof createSignatureFlights>;
