import type { RemoteInfo } from "node:dgram";
import type { Socket } from "node:net";
import { type EventStore, followStore } from "@dmarc-ledger/event-store";
import { limitConnections } from "@dmarc-ledger/process/connection-limits";
import { TCPServer, UDPServer } from "dns2";
import type { Logger } from "pino";
import { answerQuery } from "./answer-query.js";
import { PublishedRecords } from "./published-records.js";
import type { DnsSettings } from "./settings.js";
import { mxRdata, TYPE } from "./wire.js";
import { Zone, type ZoneApex } from "./zone.js";

export interface DnsServerOptions {
  store: EventStore;
  settings: DnsSettings;
  logger: Logger;
}

export interface RunningDnsServer {
  /** UDP and TCP listen on the same port. */
  ports: { udp: number; tcp: number };
  host: string;
  zone: Zone;
  published: PublishedRecords;
  /** Position of the last event the zone reflects. */
  readonly position: bigint | null;
  stop(): Promise<void>;
}

/** No DNS query is near this; larger datagrams are dropped unread. */
const MAX_QUERY_BYTES = 4096;
/** A TCP client that stops reading while pipelining queries is cut off past this much unsent data. */
const MAX_TCP_PENDING_BYTES = 256 * 1024;
/** However busy it keeps it, a TCP connection is closed after this long. */
const MAX_TCP_CONNECTION_MS = 120_000;
const SWEEP_INTERVAL_MS = 1000;

class BoundedUdpServer extends UDPServer {
  override handle(data: Buffer, rinfo: RemoteInfo): void {
    if (data.length > MAX_QUERY_BYTES) return;
    super.handle(data, rinfo);
  }
}

function zoneApexes(settings: DnsSettings): ZoneApex[] {
  const apex = (name: string): ZoneApex => ({
    name,
    soa: {
      primary: settings.nameServers[0]!,
      admin: settings.soaMailbox,
      refresh: 3600,
      retry: 600,
      expire: 604_800,
      minimum: settings.negativeTtl,
    },
    soaTtl: 3600,
    nameServers: settings.nameServers,
    nsTtl: 86_400,
  });
  const apexes = [apex(settings.safeSpfZone)];
  if (settings.reportsDomain && settings.reportsDomain !== settings.safeSpfZone) {
    const reports = apex(settings.reportsDomain);
    if (settings.reportsMx.length > 0) {
      reports.extra = [
        {
          type: TYPE.MX,
          set: {
            ttl: settings.recordTtl,
            rdatas: settings.reportsMx.map((mx) => mxRdata(mx.preference, mx.exchange)),
          },
        },
      ];
    }
    apexes.push(reports);
  }
  return apexes;
}

/**
 * The authoritative DNS server: answers from an in-memory zone that follows the event store.
 * It reads every event up to the store's head before it listens, so its first answers are
 * complete, then goes on following (a new record is served within the store's poll interval).
 * Several of these may run at once: each is a read-only replica of the zone.
 */
export async function startDnsServer(options: DnsServerOptions): Promise<RunningDnsServer> {
  const { store, settings, logger } = options;
  const zone = new Zone(zoneApexes(settings), Math.floor(Date.now() / 1000));
  const published = new PublishedRecords(zone, {
    safeSpfZone: settings.safeSpfZone,
    reportsDomain: settings.reportsDomain,
    recordTtl: settings.recordTtl,
    onSkipped: (event, reason) =>
      logger.warn({ stream: event.stream, position: String(event.position), reason }, "record not served"),
  });

  let position: bigint | null = null;
  const head = await store.headPosition();
  let markCaughtUp: () => void = () => {};
  const caughtUp = new Promise<void>((resolve) => {
    markCaughtUp = resolve;
  });
  if (head === null) markCaughtUp();
  const follower = followStore({
    store,
    from: async () => position ?? "start",
    onBatch: async (batch) => {
      for (const event of batch) {
        try {
          published.apply(event);
        } catch (error) {
          // One event we cannot serve must not stop the zone from following the others.
          logger.error(
            { err: error, stream: event.stream, position: String(event.position) },
            "event not served",
          );
        }
      }
      position = batch.at(-1)!.position;
      zone.setSerial(Math.floor(Date.now() / 1000));
      if (head !== null && position >= head) markCaughtUp();
    },
    onError: (error) => logger.error({ err: error }, "following the event store failed; retrying"),
    // Report events are large; the zone needs few of them, so keep batches small in memory.
    maxBatch: 100,
  });
  const sweeper = setInterval(() => {
    const removed = published.sweep(Date.now());
    if (removed > 0) logger.debug({ removed }, "retired records no longer served");
  }, SWEEP_INTERVAL_MS);
  sweeper.unref();

  try {
    await caughtUp;
    published.sweep(Date.now());
    const listening = await listen(zone, settings, logger);
    logger.info(
      {
        host: settings.host,
        port: listening.port,
        zones: [settings.safeSpfZone, settings.reportsDomain].filter(Boolean),
        domains: published.domains,
        names: zone.size,
      },
      "DNS server listening",
    );
    return {
      ports: { udp: listening.port, tcp: listening.port },
      host: settings.host,
      zone,
      published,
      get position() {
        return position;
      },
      async stop() {
        clearInterval(sweeper);
        await listening.close();
        await follower.stop();
      },
    };
  } catch (error) {
    clearInterval(sweeper);
    await follower.stop();
    throw error;
  }
}

async function listen(
  zone: Zone,
  settings: DnsSettings,
  logger: Logger,
): Promise<{ port: number; close(): Promise<void> }> {
  const answer =
    (transport: "udp" | "tcp") => (request: unknown, send: (bytes: Buffer) => unknown, client: unknown) => {
      try {
        const bytes = answerQuery(zone, request as never, {
          transport,
          maxUdpPayload: settings.maxUdpPayload,
        });
        if (!bytes) return;
        if (transport === "tcp" && (client as Socket).writableLength > MAX_TCP_PENDING_BYTES) {
          (client as Socket).destroy();
          return;
        }
        const sent = send(bytes);
        if (sent instanceof Promise) sent.catch((error) => logger.debug({ err: error }, "UDP send failed"));
      } catch (error) {
        // A query that breaks the answer is dropped; the server goes on.
        logger.warn({ err: error }, "query dropped");
      }
    };
  const onRequestError = (error: unknown) => logger.debug({ err: error }, "malformed DNS message dropped");
  const sockets = new Set<Socket>();
  const type = settings.host.includes(":") ? "udp6" : "udp4";

  for (let attempt = 0; ; attempt++) {
    const udp = new BoundedUdpServer({ type });
    udp.on("request", answer("udp") as never);
    udp.on("requestError", onRequestError);
    udp.on("error", (error) => logger.error({ err: error }, "UDP socket error"));
    await new Promise<void>((resolve, reject) => {
      udp.once("error", reject);
      udp.bind(settings.port, settings.host, () => {
        udp.off("error", reject);
        resolve();
      });
    });
    const port = udp.address().port;
    const tcp = new TCPServer({ idleTimeout: settings.tcpIdleTimeoutMs } as never);
    // In all and per address: one client opening connections cannot take every place, and a new
    // connection takes the place of one that has waited a second without a query in flight.
    limitConnections(tcp, { total: settings.tcpMaxConnections, perAddress: settings.tcpMaxConnectionsPerIp });
    tcp.on("request", answer("tcp") as never);
    tcp.on("requestError", onRequestError);
    tcp.on("connection", (socket: Socket) => {
      sockets.add(socket);
      const lifetime = setTimeout(() => socket.destroy(), MAX_TCP_CONNECTION_MS);
      lifetime.unref();
      socket.on("close", () => {
        clearTimeout(lifetime);
        sockets.delete(socket);
      });
    });
    const error = await new Promise<Error | null>((resolve) => {
      tcp.once("error", resolve);
      tcp.listen(port, settings.host, () => {
        tcp.off("error", resolve);
        resolve(null);
      });
    });
    if (error) {
      udp.close();
      // With port 0 the system's free UDP port may be taken for TCP: try another.
      if (settings.port === 0 && attempt < 20) continue;
      throw error;
    }
    tcp.on("error", (failure) => logger.error({ err: failure }, "TCP server error"));
    return {
      port,
      async close() {
        await Promise.all([
          new Promise<void>((resolve) => udp.close(() => resolve())),
          new Promise<void>((resolve) => {
            tcp.close(() => resolve());
            for (const socket of sockets) socket.destroy();
          }),
        ]);
      },
    };
  }
}
