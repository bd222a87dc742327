import { chmod, rm } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import type { Runtime } from "@dmarc-ledger/runtime";
import type { Logger } from "pino";
import type { CliIO } from "../io.js";
import { attachedRuntime, serviceStopping } from "./attached-runtime.js";
import {
  alreadyRunningMessage,
  type ControlAnswer,
  type ControlRequest,
  controlSocketPath,
  loggableArgv,
  maxRequestBytes,
  redactApiKeys,
} from "./protocol.js";

export interface ControlServer {
  path: string;
  stop(): Promise<void>;
}

/** Commands from the CLI run one at a time, each within this long. */
const requestTimeoutMs = 10 * 60_000;
const maxConnections = 8;

/**
 * Listens on the data directory's control socket and runs the commands the CLI hands over, with
 * the service's runtime. `run` is the CLI's own entry point (passed in: this module must not
 * import the program that imports it).
 */
export async function startControlServer(options: {
  dataDir: string;
  runtime: Runtime;
  logger: Logger;
  run: (argv: string[], io: CliIO) => Promise<number>;
}): Promise<ControlServer> {
  const path = controlSocketPath(options.dataDir);
  // A socket left by a process that died: the data-directory lock says we own the directory now.
  await rm(path, { force: true });
  let queue = Promise.resolve();
  // Told to the command running when the service stops, and refusing those queued behind it.
  const stopping = new AbortController();
  const sockets = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: false }, (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    // A client that goes away mid-answer (`import DIR | head`) makes the next write fail with
    // EPIPE or ECONNRESET: without a listener that error would end the service. The command goes
    // on to its end (an import stores what it was given); what it prints is dropped.
    socket.on("error", (error: NodeJS.ErrnoException) =>
      options.logger.debug({ code: error.code }, "control client went away"),
    );
    socket.setTimeout(requestTimeoutMs, () => socket.destroy());
    readRequest(socket)
      .then((request) => {
        if (!request) return;
        // One command at a time, as the CLI would run them one after another.
        queue = queue.then(() => runRequest(socket, request, { ...options, stopping: stopping.signal }));
        return queue;
      })
      .catch((error: unknown) => {
        options.logger.warn({ err: error }, "control socket request failed");
        socket.destroy();
      });
  });
  server.maxConnections = maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // Created owner-only from the start: no moment at which another user could connect.
    const umask = process.umask(0o177);
    try {
      server.listen(path, () => resolve());
    } finally {
      process.umask(umask);
    }
  });
  await chmod(path, 0o600);
  // After listening, an accept that fails (EMFILE) is said in the log, not thrown at the process.
  server.on("error", (error) => options.logger.warn({ err: error }, "control socket error"));
  return {
    path,
    async stop() {
      // No new connection; the command running ends early (an import stores what it has begun)
      // and answers its client; a client that has not sent its request yet is let go.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      stopping.abort();
      await queue.catch(() => {});
      for (const socket of sockets) socket.destroy();
      await closed;
      await rm(path, { force: true });
    },
  };
}

/**
 * Reads the request line. Not with `for await`: leaving that loop would destroy the socket the
 * answer goes back on.
 */
function readRequest(socket: Socket): Promise<ControlRequest | null> {
  return new Promise((resolve, reject) => {
    let buffered = "";
    const done = (request: ControlRequest | null, error?: Error) => {
      socket.off("data", onData);
      socket.off("end", onEnd);
      if (error) reject(error);
      else resolve(request);
    };
    const onEnd = () => done(null);
    const onData = (chunk: Buffer) => {
      buffered += String(chunk);
      const newline = buffered.indexOf("\n");
      if (newline === -1) {
        if (buffered.length > maxRequestBytes) {
          socket.end(
            `${JSON.stringify({ err: "error: request too large" })}\n${JSON.stringify({ exit: 1 })}\n`,
          );
          done(null);
        }
        return;
      }
      try {
        const parsed = JSON.parse(buffered.slice(0, newline)) as Partial<ControlRequest>;
        if (!Array.isArray(parsed.argv) || !parsed.argv.every((arg) => typeof arg === "string")) {
          throw new Error("malformed control request");
        }
        const caller = parsed.caller;
        done({
          argv: parsed.argv,
          cwd: typeof parsed.cwd === "string" ? parsed.cwd : process.cwd(),
          ...(caller && Number.isSafeInteger(caller.pid) && typeof caller.user === "string"
            ? { caller: { pid: caller.pid, user: caller.user.slice(0, 64) } }
            : {}),
        });
      } catch (error) {
        done(null, error as Error);
      }
    };
    socket.on("data", onData);
    socket.on("end", onEnd);
  });
}

/**
 * Runs one command and logs it, one line whatever its outcome: who handed it over, the command
 * line (loggableArgv: no key, no secret option), the exit status, how long it took, and for a
 * failure its last error line. Never what it printed: `tenant create` prints a key.
 */
async function runRequest(
  socket: Socket,
  request: ControlRequest,
  options: {
    dataDir: string;
    runtime: Runtime;
    logger: Logger;
    run: (argv: string[], io: CliIO) => Promise<number>;
    stopping: AbortSignal;
  },
): Promise<void> {
  const started = performance.now();
  const send = (answer: ControlAnswer) => {
    if (!socket.destroyed && socket.writable) socket.write(`${JSON.stringify(answer)}\n`);
  };
  let lastError: string | null = null;
  const io: CliIO = {
    out: (text) => send({ out: text }),
    err: (text) => {
      if (text.trim()) lastError = text;
      send({ err: text });
    },
    cwd: request.cwd,
  };
  let exit: number;
  if (request.argv[0] === "start") {
    io.err(`error: ${alreadyRunningMessage(options.dataDir)}`);
    exit = 1;
  } else if (options.stopping.aborted) {
    io.err("error: the service is stopping; run the command again once it runs, or with it stopped");
    exit = 1;
  } else {
    try {
      exit = await serviceStopping.run(options.stopping, () =>
        attachedRuntime.run(options.runtime, () => options.run(request.argv, io)),
      );
    } catch (error) {
      // The CLI's entry point answers every failure with a status; this is a bug of its own.
      io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
      exit = 1;
    }
  }
  const line = {
    caller: request.caller ?? null,
    argv: loggableArgv(request.argv),
    cwd: request.cwd,
    exit,
    durationMs: Math.round(performance.now() - started),
    ...(exit !== 0 && lastError ? { error: redactApiKeys(lastError) } : {}),
  };
  if (exit === 0) options.logger.info(line, "control command");
  else options.logger.warn(line, "control command failed");
  send({ exit });
  socket.end();
}
