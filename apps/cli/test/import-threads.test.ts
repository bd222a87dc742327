import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { filesForThreads, importThreadCount } from "../src/commands/import-threads.js";

const postgres = { postgres: true, inService: false };

describe("how many threads an import stores on", () => {
  it("one per core (up to 4) on PostgreSQL from filesForThreads files, one below", () => {
    expect(importThreadCount(undefined, filesForThreads - 1, postgres)).toBe(1);
    expect(importThreadCount(undefined, filesForThreads, postgres)).toBe(Math.min(availableParallelism(), 4));
  });

  it("as many as asked on PostgreSQL, whatever the files", () => {
    expect(importThreadCount(3, 10, postgres)).toBe(3);
    expect(importThreadCount(1, filesForThreads * 2, postgres)).toBe(1);
  });

  it("one on the embedded database or inside the service, and refuses more when asked", () => {
    for (const where of [
      { postgres: false, inService: false },
      { postgres: true, inService: true },
    ]) {
      expect(importThreadCount(undefined, filesForThreads * 2, where)).toBe(1);
      expect(importThreadCount(1, 10, where)).toBe(1);
      expect(() => importThreadCount(2, 10, where)).toThrow(/--threads needs PostgreSQL/);
    }
  });
});
