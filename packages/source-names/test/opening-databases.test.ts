import { describe, expect, it } from "vitest";
import { openNetworkDatabases } from "../src/network-databases.js";
import { serviceMap } from "../src/service-map.js";
import { lazySourceNamer, sourceNamer } from "../src/source-namer.js";

describe("opening the network databases", () => {
  it("reads them a chunk at a time, the event loop turning between chunks", async () => {
    // A process answering DNS or HTTP keeps answering while the 40 MB are read: count the turns
    // its event loop takes while they open.
    let turns = 0;
    let opening = true;
    const turn = () => {
      turns++;
      if (opening) setImmediate(turn);
    };
    setImmediate(turn);
    const databases = await openNetworkDatabases();
    opening = false;
    expect(turns).toBeGreaterThanOrEqual(20);
    expect(databases.asnOf("8.8.8.8")?.number).toBe(15169);
  });

  it("knows which versions name before it opens them, and names only once ready", async () => {
    const lazy = lazySourceNamer(null);
    const noName = { name: null, confirmed: false };
    expect(() => lazy.name("8.8.8.8", noName)).toThrow(/not ready/);
    const eager = sourceNamer(serviceMap(null), await openNetworkDatabases());
    expect(lazy.sources).toEqual(eager.sources);
    await lazy.ready();
    expect(lazy.name("8.8.8.8", noName)).toEqual(eager.name("8.8.8.8", noName));
  });
});
