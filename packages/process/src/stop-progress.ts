/**
 * What a stop is waiting for. Each part of a stop runs under a name while it stops, so that a stop
 * past its deadline can say which part held it: an in-process stop once hung a test's hook for two
 * minutes and said nothing of where (a follower polling on after its projector had stopped).
 */
export interface StopProgress {
  /** Runs `stop` as the part `name`; parts run inside a part nest under it. */
  part(name: string, stop: () => Promise<void>): Promise<void>;
  /** The parts stopping now, outermost first: empty when none is. */
  waitingFor(): string[];
}

export function stopProgress(): StopProgress {
  const pending: string[] = [];
  return {
    async part(name, stop) {
      pending.push(name);
      try {
        await stop();
      } finally {
        pending.splice(pending.lastIndexOf(name), 1);
      }
    },
    waitingFor: () => [...pending],
  };
}

/** For a stop whose caller does not ask what it waits for. */
export const unwatchedStop: StopProgress = {
  part: (_name, stop) => stop(),
  waitingFor: () => [],
};
