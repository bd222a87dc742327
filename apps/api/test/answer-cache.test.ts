import { describe, expect, it } from "vitest";
import { AnswerCache } from "../src/answer-cache.js";

describe("AnswerCache", () => {
  it("keeps an answer for its version only", async () => {
    const cache = new AnswerCache(1024 * 1024);
    let computed = 0;
    const compute = async () => `answer ${++computed}`;
    expect(await cache.answer("k", "v1", compute)).toEqual({ body: "answer 1", outcome: "miss" });
    expect(await cache.answer("k", "v1", compute)).toEqual({ body: "answer 1", outcome: "hit" });
    expect(await cache.answer("k", "v2", compute)).toEqual({ body: "answer 2", outcome: "miss" });
    expect(cache.get("k", "v1")).toBeUndefined();
  });

  it("computes an answer once for every request that misses it at the same time", async () => {
    const cache = new AnswerCache(1024 * 1024);
    let computed = 0;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const compute = async () => {
      computed++;
      await gate;
      return "slow answer";
    };
    const asked = Array.from({ length: 10 }, () => cache.answer("k", "v1", compute));
    release();
    const answers = await Promise.all(asked);
    expect(computed).toBe(1);
    expect(answers.map((a) => a.outcome).sort()).toEqual(["miss", ...Array(9).fill("shared")]);
    expect(new Set(answers.map((a) => a.body))).toEqual(new Set(["slow answer"]));
  });

  it("does not keep a failed computation, and the next request computes again", async () => {
    const cache = new AnswerCache(1024 * 1024);
    await expect(cache.answer("k", "v1", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await cache.answer("k", "v1", async () => "fine")).toEqual({ body: "fine", outcome: "miss" });
  });

  it("stays within its bytes, the least recently used out first, and keeps no answer over a sixteenth", () => {
    // Two bytes a character: each answer below takes 2 * (100 + 1 + 2) = 206 bytes; twenty fit.
    const cache = new AnswerCache(20 * 206);
    const body = "x".repeat(100);
    const keys = "abcdefghijklmnopqrstu";
    for (const key of keys) cache.set(key, "v1", body);
    expect(cache.size).toEqual({ entries: 20, bytes: 20 * 206 });
    expect(cache.get("a", "v1")).toBeUndefined();
    expect(cache.get("u", "v1")).toBe(body);
    // "c" used now: the next one in takes the place of "b", then of "d".
    expect(cache.get("c", "v1")).toBe(body);
    cache.set("v", "v1", body);
    cache.set("w", "v1", body);
    expect(cache.get("b", "v1")).toBeUndefined();
    expect(cache.get("d", "v1")).toBeUndefined();
    expect(cache.get("c", "v1")).toBe(body);
    cache.set("big", "v1", "y".repeat(300));
    expect(cache.get("big", "v1")).toBeUndefined();
  });

  it("computes a per-version value once", async () => {
    const cache = new AnswerCache(1024);
    let computed = 0;
    const newest = () => cache.once("v1", async () => ++computed);
    expect(await Promise.all([newest(), newest(), newest()])).toEqual([1, 1, 1]);
    expect(await cache.once("v2", async () => ++computed)).toBe(2);
  });

  it("is off at 0 bytes", () => {
    const cache = new AnswerCache(0);
    expect(cache.enabled).toBe(false);
    cache.set("k", "v1", "x");
    expect(cache.get("k", "v1")).toBeUndefined();
  });
});
