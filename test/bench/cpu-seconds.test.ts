/**
 * The import bench's CPU accounting (cpu-seconds.ts) counts what it says: a child's CPU once it
 * has been waited for, and the CPU of PostgreSQL's server processes.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { testServerUrl } from "@dmarc-ledger/db/testing";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { cpuSince, readCpu } from "./cpu-seconds.js";

describe("CPU seconds from /proc", () => {
  it("counts a child's CPU once it has been waited for", () => {
    const before = readCpu();
    const child = spawnSync(process.execPath, ["-e", "while (process.cpuUsage().user < 600000);"]);
    expect(child.status).toBe(0);
    // A loop until it has used 0.6 s of CPU, however long a loaded machine makes that take (a
    // loop of 0.6 s of wall time had 0.3 s of CPU in one run of the suite): less than 0.5 s
    // counted, in the kernel's ticks of 0.01 s, would be CPU lost.
    expect(cpuSince(before).children).toBeGreaterThanOrEqual(0.5);
  });

  it("counts the CPU of PostgreSQL's backend, also after it exited", async () => {
    const before = readCpu();
    const client = new pg.Client({ connectionString: testServerUrl });
    await client.connect();
    let backend: number;
    try {
      backend = (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]!.pid;
      await client.query("select count(*) from generate_series(1, 3000000)");
    } finally {
      await client.end();
    }
    // Once its backend is gone, its time is the postmaster's, and counted all the same.
    await expect.poll(() => existsSync(`/proc/${backend}`)).toBe(false);
    expect(cpuSince(before).postgres).toBeGreaterThanOrEqual(0.1);
  });
});
