import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { processIsRunning } from "../src/process-running.js";

describe("processIsRunning", () => {
  it("says yes for this process and a live child, no for an id no process has", async () => {
    expect(processIsRunning(process.pid)).toBe(true);
    const child = spawn("sleep", ["5"]);
    try {
      expect(processIsRunning(child.pid ?? 0)).toBe(true);
    } finally {
      child.kill();
      await once(child, "close");
    }
    expect(processIsRunning(child.pid ?? 0)).toBe(false);
    expect(processIsRunning(0)).toBe(false);
    expect(processIsRunning(-1)).toBe(false);
  });

  it("counts a zombie, exited and not yet collected by its parent, as stopped", async () => {
    // The shell starts a short sleep in the background, prints its id and becomes a long `sleep`,
    // which never collects it: the short one stays a zombie while the long one runs. The short one
    // outlives the shell's exec, or the shell itself might collect it first.
    const parent = spawn("sh", ["-c", "sleep 0.5 & echo $!; exec sleep 10"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const [line] = (await once(parent.stdout, "data")) as [Buffer];
      const zombie = Number(line.toString().trim());
      let stillThere = true;
      // Until the short sleep has exited, it runs.
      for (let tries = 0; tries < 250 && stillThere; tries += 1) {
        stillThere = processIsRunning(zombie);
        if (stillThere) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(stillThere).toBe(false);
      // The kernel still has it: a signal 0 reaches it, which is what this function looks past.
      expect(() => process.kill(zombie, 0)).not.toThrow();
    } finally {
      parent.kill();
      await once(parent, "close");
    }
  });
});
