import { describe, expect, it } from "vitest";
import type { ImportedInput } from "../src/commands/import-files.js";
import { InFileOrder } from "../src/commands/import-order.js";

const input = (file: number, name: string, fileBytes: number): ImportedInput => ({
  file,
  name,
  items: [],
  fileBytes,
});

describe("inputs shown in the import's file order", () => {
  it("shows a later file's inputs only once every earlier file is shown to its end", () => {
    const shown: [string, number][] = [];
    const order = new InFileOrder([100, 10, 40, 5], ({ name }, progress) => shown.push([name, progress]));
    // Two threads: one has files 0 and 2, the other 1 and 3, and the second is ahead.
    order.input(input(1, "b", 10));
    order.fileRead(1, 1);
    order.input(input(3, "d", 5));
    order.fileRead(3, 1);
    expect(shown).toEqual([]);
    order.input(input(0, "a#1", 60));
    expect(shown).toEqual([["a#1", 60]]);
    order.input(input(2, "c", 40));
    order.fileRead(2, 1);
    expect(shown).toEqual([["a#1", 60]]);
    order.input(input(0, "a#2", 100));
    expect(order.complete).toBe(false);
    order.fileRead(0, 2);
    expect(shown).toEqual([
      ["a#1", 60],
      ["a#2", 100],
      ["b", 110],
      ["c", 150],
      ["d", 155],
    ]);
    expect(order.complete).toBe(true);
  });

  it("waits for a file's last input when it is told the count first, and passes a file with none", () => {
    const shown: string[] = [];
    const order = new InFileOrder([3, 0, 4], ({ name }) => shown.push(name));
    order.fileRead(0, 2);
    order.input(input(0, "x#1", 1));
    order.fileRead(1, 0);
    order.input(input(2, "z", 4));
    order.fileRead(2, 1);
    expect(shown).toEqual(["x#1"]);
    order.input(input(0, "x#2", 3));
    expect(shown).toEqual(["x#1", "x#2", "z"]);
    expect(order.complete).toBe(true);
  });
});
