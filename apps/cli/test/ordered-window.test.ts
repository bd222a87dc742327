import { describe, expect, it } from "vitest";
import { OrderedWindow } from "../src/commands/ordered-window.js";

/** A task the test finishes by hand. */
function gate<T>() {
  let open!: (value: T) => void;
  let fail!: (error: Error) => void;
  const promise = new Promise<T>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { promise, open, fail };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("an ordered window", () => {
  it("starts new work when any running work finishes, and delivers in the order it was added", async () => {
    const delivered: string[] = [];
    const window = new OrderedWindow<string, string>(
      { running: 2, runningBytes: 1000, waiting: 100 },
      async (result, name) => {
        delivered.push(`${name}=${await result}`);
      },
    );
    const slow = gate<string>();
    const started: string[] = [];
    const adding = (async () => {
      await window.add(1, "slow", () => {
        started.push("slow");
        return slow.promise;
      });
      for (const name of ["a", "b", "c", "d"]) {
        await window.add(1, name, async () => {
          started.push(name);
          await tick();
          return name.toUpperCase();
        });
      }
    })();
    // A window that waited for its oldest work would wait here until the slow one finished.
    await Promise.race([
      adding,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error("adding waited for the slow work")), 2000),
      ),
    ]);
    // The slow one holds one place; the others ran through the second, one after another.
    expect(started).toEqual(["slow", "a", "b", "c", "d"]);
    expect(delivered).toEqual([]);
    slow.open("SLOW");
    await window.drain();
    expect(delivered).toEqual(["slow=SLOW", "a=A", "b=B", "c=C", "d=D"]);
  });

  it("never runs more than its bound at once", async () => {
    let running = 0;
    let most = 0;
    const window = new OrderedWindow<number, number>(
      { running: 3, runningBytes: 1e9, waiting: 100 },
      async (r) => {
        await r;
      },
    );
    for (let i = 0; i < 20; i++) {
      await window.add(1, i, async () => {
        running++;
        most = Math.max(most, running);
        for (let t = 0; t < (i % 4) + 1; t++) await tick();
        running--;
        return i;
      });
    }
    await window.drain();
    expect(most).toBe(3);
  });

  it("bounds the bytes running at once, and runs larger work alone", async () => {
    const log: string[] = [];
    const gates = new Map<string, ReturnType<typeof gate<void>>>();
    const window = new OrderedWindow<void, string>(
      { running: 10, runningBytes: 100, waiting: 100 },
      async (r) => {
        await r;
      },
    );
    const add = (name: string, bytes: number) =>
      window.add(bytes, name, () => {
        log.push(`start ${name}`);
        const g = gate<void>();
        gates.set(name, g);
        return g.promise;
      });
    await add("a", 60);
    const b = add("b", 60); // 120 > 100: waits for a
    await tick();
    expect(log).toEqual(["start a"]);
    gates.get("a")!.open();
    await b;
    expect(log).toEqual(["start a", "start b"]);
    const huge = add("huge", 500); // past the bound: waits until nothing runs, then runs alone
    await tick();
    expect(log).toEqual(["start a", "start b"]);
    gates.get("b")!.open();
    await huge;
    expect(log).toEqual(["start a", "start b", "start huge"]);
    gates.get("huge")!.open();
    await window.drain();
  });

  it("stops adding while too many finished results wait for an earlier one", async () => {
    const window = new OrderedWindow<number, number>(
      { running: 10, runningBytes: 1e9, waiting: 2 },
      async (r) => {
        await r;
      },
    );
    const first = gate<number>();
    await window.add(1, 0, () => first.promise);
    await window.add(1, 1, async () => 1);
    await window.add(1, 2, async () => 2);
    await tick();
    let added = false;
    const third = window
      .add(1, 3, async () => 3)
      .then(() => {
        added = true;
      });
    await tick();
    expect(added).toBe(false);
    first.open(0);
    await third;
    expect(added).toBe(true);
    await window.drain();
  });

  it("delivers a failure in its turn, and settle waits for work it will not deliver", async () => {
    const delivered: string[] = [];
    const window = new OrderedWindow<string, string>(
      { running: 4, runningBytes: 1e9, waiting: 100 },
      async (result, name) => {
        delivered.push(
          await result.then(
            (v) => `${name}=${v}`,
            (e: Error) => `${name}!${e.message}`,
          ),
        );
      },
    );
    const failing = gate<string>();
    const later = gate<string>();
    await window.add(1, "x", () => failing.promise);
    await window.add(1, "y", () => later.promise);
    await window.add(1, "thrown", () => {
      throw new Error("thrown before any promise");
    });
    failing.fail(new Error("database down"));
    later.open("fine");
    await window.drain();
    expect(delivered).toEqual(["x!database down", "y=fine", "thrown!thrown before any promise"]);

    const pending = gate<string>();
    await window.add(1, "z", () => pending.promise);
    let settled = false;
    const settling = window.settle().then(() => {
      settled = true;
    });
    await tick();
    expect(settled).toBe(false);
    pending.open("late");
    await settling;
    expect(settled).toBe(true);
  });
});
