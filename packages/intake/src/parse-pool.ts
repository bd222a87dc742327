import { Worker } from "node:worker_threads";
import type { ParsedInput } from "./parse-input.js";
import { type ClonedRefusal, type PreparedInput, type PrepareRequest, reviveRefusal } from "./prepare.js";

/**
 * Parse worker threads. Parsing a report (MIME, base64, gunzip or unzip, XML) and hashing and
 * compressing it for the archive are CPU work on the order of what storing it costs; on worker
 * threads they run beside the event loop, which then only stores, and the SMTP, IMAP and HTTP
 * channels stay responsive while a large report is parsed.
 */
export class ParsePool {
  /** Workers that loaded the parser and wait for an input. */
  private readonly idle: Worker[] = [];
  /** Workers still loading the parser. */
  private readonly starting = new Map<Worker, Promise<void>>();
  private readonly workers = new Set<Worker>();
  private readonly queue: Task[] = [];
  /** Workers that failed before they were ready, one after another: past a few, none is started. */
  private failedStarts = 0;

  private readonly failureListeners = new Set<(reason: string) => void>();
  /** Workers close() stopped: their end is no failure. */
  private readonly closed = new WeakSet<Worker>();

  /** `startWorker` starts one worker thread; tests give one that fails. */
  constructor(
    readonly threads: number,
    private readonly startWorker: () => Worker = startParseWorker,
  ) {}

  /**
   * Hears of every worker that failed, with the reason. The inputs are then parsed on the event
   * loop, which is slower but loses nothing: a process should say so in its log.
   */
  onWorkerFailure(listener: (reason: string) => void): () => void {
    this.failureListeners.add(listener);
    return () => this.failureListeners.delete(listener);
  }

  private tellFailure(reason: string): void {
    for (const listener of this.failureListeners) listener(reason);
  }

  /**
   * Prepares the input on a worker; rejects with ParseWorkerFailedError only if the worker itself
   * fails. null while no worker is ready yet (they are being started): the caller prepares the
   * input itself, so that the first inputs do not wait for a worker to load the parser, and none
   * does when workers cannot start at all.
   */
  prepare(request: PrepareRequest): Promise<PreparedInput> | null {
    this.startWorkers();
    if (this.starting.size === this.workers.size) return null;
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Starts the workers now, so that they are ready by the first input (loading the parser takes
   * about 0.2 s of CPU on the build output, 1.5 s through tsx). Resolves once every one is ready,
   * or failed.
   */
  async warm(): Promise<void> {
    this.startWorkers();
    await Promise.all(this.starting.values());
  }

  /** Stops the workers; inputs still queued are refused with ParseWorkerFailedError. */
  async close(): Promise<void> {
    for (const task of this.queue.splice(0)) task.reject(new ParseWorkerFailedError("the parse pool closed"));
    const workers = [...this.workers];
    for (const worker of workers) this.closed.add(worker);
    // Stopped, not failed: a worker stopped while it loads is no failed start.
    this.starting.clear();
    this.workers.clear();
    this.idle.length = 0;
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  private startWorkers(): void {
    while (this.workers.size < this.threads && this.failedStarts < maxFailedStarts) this.spawn();
  }

  private dispatch(): void {
    while (this.queue.length > 0 && this.idle.length > 0) this.run(this.idle.pop()!, this.queue.shift()!);
    // Queued inputs whose workers all failed: a new one takes them, or they are refused.
    if (this.queue.length > 0 && this.workers.size === 0) {
      this.startWorkers();
      if (this.workers.size === 0)
        for (const task of this.queue.splice(0))
          task.reject(new ParseWorkerFailedError("no parse worker could start"));
    }
  }

  private spawn(): void {
    const worker = this.startWorker();
    this.workers.add(worker);
    // Idle or loading, a worker does not keep the process alive; a busy one does (see run).
    worker.unref();
    // Without a listener, a worker's "error" would be thrown in this thread. A busy worker's
    // task hears of it (see run); an idle or loading one just leaves the pool.
    worker.on("error", () => {});
    const ready = new Promise<void>((resolve) => {
      worker.once("message", () => {
        this.starting.delete(worker);
        this.failedStarts = 0;
        this.idle.push(worker);
        this.dispatch();
        resolve();
      });
      worker.once("exit", () => {
        if (this.starting.delete(worker)) {
          this.failedStarts++;
          this.tellFailure(
            this.failedStarts >= maxFailedStarts
              ? `a parse worker exited before it was ready, ${this.failedStarts} in a row: no more are started, inputs are parsed on the event loop`
              : "a parse worker exited before it was ready",
          );
        }
        this.workers.delete(worker);
        const idle = this.idle.indexOf(worker);
        if (idle !== -1) this.idle.splice(idle, 1);
        this.dispatch();
        resolve();
      });
    });
    this.starting.set(worker, ready);
  }

  private run(worker: Worker, task: Task): void {
    worker.ref();
    const settle = () => {
      worker.off("message", onMessage);
      worker.off("error", onFailure);
      worker.off("exit", onFailure);
    };
    const onMessage = (message: PreparedMessage) => {
      settle();
      worker.unref();
      this.idle.push(worker);
      task.resolve(revive(message));
      this.dispatch();
    };
    const onFailure = (cause: unknown) => {
      settle();
      void worker.terminate();
      const reason = cause instanceof Error ? cause.message : `exited with code ${String(cause)}`;
      // Stopped by close(), it did not fail.
      if (!this.closed.has(worker)) this.tellFailure(`a parse worker failed with an input: ${reason}`);
      task.reject(new ParseWorkerFailedError(`a parse worker failed: ${reason}`));
    };
    worker.on("message", onMessage);
    worker.on("error", onFailure);
    worker.on("exit", onFailure);
    // A copy goes to the worker (structured clone): the caller keeps its bytes, to parse again or keep.
    worker.postMessage(task.request);
  }
}

/** Workers that may fail one after another before they are ready, before the pool stops starting them. */
const maxFailedStarts = 3;

/**
 * Starts a process's parse workers ahead of its first input (see ParsePool.warm), or with
 * `{ warm: false }` only when an input first needs one (prepareHere takes most small inputs on the
 * event loop): an import of small files never needs them, and loading the parser in each cost
 * about 0.5 s of CPU at start on a core the database shares. Returns a function that stops telling
 * `onWorkerFailure`.
 */
export function startParseWorkers(
  threads: number,
  onWorkerFailure?: (reason: string) => void,
  { warm = true }: { warm?: boolean } = {},
): () => void {
  if (threads <= 0) return () => {};
  const pool = parsePool(threads);
  const stopTelling = onWorkerFailure ? pool.onWorkerFailure(onWorkerFailure) : () => {};
  if (warm) void pool.warm();
  return stopTelling;
}

export class ParseWorkerFailedError extends Error {
  override readonly name = "ParseWorkerFailedError";
}

/** One pool a process for each thread count asked for: every channel shares it. */
const pools = new Map<number, ParsePool>();

export function parsePool(threads: number): ParsePool {
  let pool = pools.get(threads);
  if (!pool) {
    pool = new ParsePool(threads);
    pools.set(threads, pool);
  }
  return pool;
}

interface Task {
  request: PrepareRequest;
  resolve(prepared: PreparedInput): void;
  reject(error: Error): void;
}

type PreparedMessage = Omit<PreparedInput, "parsed"> & {
  parsed: Exclude<ParsedInput, { kind: "refused" }> | { kind: "refused"; refusal: ClonedRefusal };
};

function revive(message: PreparedMessage): PreparedInput {
  const { parsed } = message;
  return {
    ...message,
    parsed: parsed.kind === "refused" ? { kind: "refused", error: reviveRefusal(parsed.refusal) } : parsed,
  };
}

/**
 * The built worker beside this module, with its extension: dist/parse-worker.js under plain node,
 * parse-worker.mjs in the CLI bundle (scripts/bundle-cli.mjs builds it as an entry point of its
 * own, beside the chunk this module lands in); the TypeScript source through tsx when the process
 * itself runs the sources (development, tests), as its own modules are loaded.
 */
function startParseWorker(): Worker {
  const here = import.meta.url;
  const built = here.match(/\.m?js$/)?.[0];
  if (built) return new Worker(new URL(`./parse-worker${built}`, here));
  const entry = new URL("./parse-worker.ts", here).href;
  const tsx = import.meta.resolve("tsx/esm/api");
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`,
    { eval: true },
  );
}
