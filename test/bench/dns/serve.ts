/**
 * One DNS server for the bench, in a process of its own so that it has a core to itself:
 * `serve.ts ledger DATABASE_URL` runs apps/dns on the event store in that database;
 * `serve.ts constant` runs a bare dns2 server answering every question with one constant TXT record.
 * Prints `port <n>` when it answers, and stops on SIGTERM.
 */
import { startDnsServer } from "@dmarc-ledger/dns";
import { openRuntime } from "@dmarc-ledger/runtime";
import { createServer, Packet } from "dns2";
import { pino } from "pino";

const [mode, databaseUrl] = process.argv.slice(2);
let stop: () => Promise<unknown>;
if (mode === "ledger") {
  const runtime = await openRuntime({ DATABASE_URL: databaseUrl });
  const started = Date.now();
  const server = await startDnsServer({
    store: runtime.store,
    logger: pino({ level: "warn" }),
    settings: {
      host: "127.0.0.1",
      port: 0,
      safeSpfZone: "spf.bench.test",
      reportsDomain: "reports.bench.test",
      nameServers: ["ns1.bench-dns.test"],
      soaMailbox: "hostmaster.bench.test",
      reportsMx: [],
      recordTtl: 300,
      negativeTtl: 60,
      maxUdpPayload: 1232,
      tcpMaxConnections: 64,
      tcpMaxConnectionsPerIp: 64,
      tcpIdleTimeoutMs: 10_000,
    },
  });
  console.log(
    `loaded ${server.published.domains} domains, ${server.zone.size} names in ${Date.now() - started} ms`,
  );
  console.log(`rss ${Math.round(process.memoryUsage().rss / 1024 / 1024)} MiB`);
  console.log(`port ${server.ports.udp}`);
  stop = async () => {
    await server.stop();
    await runtime.close();
  };
} else {
  const server = createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      response.header.aa = 1;
      response.answers.push({
        name: request.questions[0]!.name,
        type: Packet.TYPE.TXT,
        class: Packet.CLASS.IN,
        ttl: 300,
        data: "v=spf1 ip4:192.0.2.0/24 -all",
      } as never);
      send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: "127.0.0.1" } });
  console.log(`port ${addresses.udp!.port}`);
  stop = () => server.close();
}
process.once("SIGTERM", async () => {
  await stop();
  process.exit(0);
});
