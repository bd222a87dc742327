/**
 * Runs the fixture DNS server in its own process, as a real server would be: its packet encoding
 * must not share the clock with the flattening being measured. Talks to the bench over IPC.
 */
import { startFixtureDnsServer } from "../src/testing/index.js";

process.once("message", async ({ zones, delayMs }) => {
  const server = await startFixtureDnsServer(zones, { delayMs });
  process.send!({ address: server.address });
  process.on("message", async (message) => {
    if (message === "queries") process.send!({ queryLog: server.queryLog });
    if (message === "close") {
      await server.close();
      process.disconnect();
    }
  });
});
