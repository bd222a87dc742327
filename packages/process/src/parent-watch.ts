/**
 * Calls `onGone` once when the process that started this one has exited. pnpm (and npm) end on
 * SIGTERM without passing it on to the script they run, so a supervisor stopping `pnpm start`
 * would leave the service running, orphaned and holding the data directory; an orphan is
 * re-parented, which is what this notices. Polls (unref'd: it keeps nothing alive).
 */
export function whenParentExits(onGone: () => void, intervalMs = 250): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(timer);
      onGone();
    }
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** Set by pnpm and npm for the scripts they run (`pnpm start`): the parent is a package manager. */
export function startedByPackageManager(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.npm_lifecycle_event);
}
