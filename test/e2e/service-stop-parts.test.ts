import { type StopProgress, stopProgress } from "@dmarc-ledger/process";
import { openRuntime } from "@dmarc-ledger/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { pgliteBackend, startTestService } from "../support/service-harness.js";

/** A StopProgress that also keeps every part in the order each began, nested ones by path. */
function recordingProgress(): StopProgress & { begun: string[] } {
  const progress = stopProgress();
  const begun: string[] = [];
  return {
    begun,
    waitingFor: progress.waitingFor,
    part(name, stop) {
      return progress.part(name, async () => {
        begun.push(progress.waitingFor().join(" > "));
        await stop();
      });
    },
  };
}

// A stop past its deadline says which part held it (packages/process, stopWithin): that needs
// every part of the service's stop to run under its name, in the order the stop documents.
describe("the in-process service's stop", () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it("names each part as it stops: intake, HTTP, DNS, then the projector app's own parts", async () => {
    const backend = await pgliteBackend();
    cleanups.push(backend.cleanup);
    const handle = await startTestService(backend.env);
    const progress = recordingProgress();
    await handle.service.stop(progress);
    await handle.runtime.close();
    expect(progress.begun).toEqual([
      "the control socket",
      "the intake",
      "the HTTP server",
      "the DNS app",
      "the projector app",
      "the projector app > the alerts",
      "the projector app > the Safe SPF process",
      "the projector app > the retention job",
      "the projector app > claiming the trees of existing domains",
      "the projector app > the ranking upkeep",
      "the projector app > the projections",
    ]);
    expect(progress.waitingFor()).toEqual([]);
    // Stopped and closed: the data directory opens again in this process.
    const again = await openRuntime(backend.env);
    await again.close();
  });
});
