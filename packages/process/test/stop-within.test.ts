import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { StopTimeoutError, stopWithin } from "../src/lifecycle.js";

const logger = pino({ level: "silent" });

describe("stopWithin", () => {
  it("resolves when the stop ends before the deadline, without cancelling anything", async () => {
    let cancelled = 0;
    await stopWithin(logger, () => new Promise((resolve) => setTimeout(resolve, 20)), {
      timeoutMs: 1_000,
      cancelQueries: async () => ++cancelled,
    });
    expect(cancelled).toBe(0);
  });

  it("cancels the running statements near the deadline, which lets a stop waiting on them end", async () => {
    let release: (() => void) | null = null;
    const started = Date.now();
    await stopWithin(logger, () => new Promise<void>((resolve) => (release = resolve)), {
      timeoutMs: 1_000,
      cancelQueries: async () => {
        release?.();
        return 1;
      },
    });
    // Cancelled at the last quarter (at most 2 s before the deadline): 750 ms here.
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
  });

  it("rejects with StopTimeoutError at the deadline when the stop never ends", async () => {
    await expect(
      stopWithin(logger, () => new Promise(() => {}), { timeoutMs: 1_000, cancelQueries: async () => 0 }),
    ).rejects.toBeInstanceOf(StopTimeoutError);
  });

  it("names the parts of the stop still under way at the deadline, outermost first", async () => {
    const stopping = stopWithin(
      logger,
      async (progress) => {
        await progress.part("the HTTP server", async () => {});
        await progress.part("the projector app", () =>
          progress.part("the projections", () => new Promise(() => {})),
        );
      },
      { timeoutMs: 300 },
    );
    await expect(stopping).rejects.toThrow(
      "stopping took longer than 300 ms (still stopping: the projector app > the projections)",
    );
  });

  it("passes on a stop that fails", async () => {
    await expect(
      stopWithin(logger, () => Promise.reject(new Error("broken")), { timeoutMs: 1_000 }),
    ).rejects.toThrow("broken");
  });
});
