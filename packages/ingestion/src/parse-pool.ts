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
  private readonly idle: Worker[] = [];
  private readonly workers = new Set<Worker>();
  private readonly queue: Task[] = [];

  constructor(readonly threads: number) {}

  /** Prepares the input on a worker; rejects with ParseWorkerFailedError only if the worker itself fails. */
  prepare(request: PrepareRequest): Promise<PreparedInput> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.dispatch();
    });
  }

  /**
   * Starts the workers now, idle, so that the first input does not wait for one to load the
   * parser (about 0.2 s of CPU on the build output, 1.5 s through tsx).
   */
  warm(): void {
    while (this.workers.size < this.threads) {
      const worker = this.spawn();
      worker.unref();
      this.idle.push(worker);
    }
  }

  /** Stops the workers; inputs still queued are refused with ParseWorkerFailedError. */
  async close(): Promise<void> {
    for (const task of this.queue.splice(0)) task.reject(new ParseWorkerFailedError("the parse pool closed"));
    await Promise.all([...this.workers].map((worker) => worker.terminate()));
    this.workers.clear();
    this.idle.length = 0;
  }

  private dispatch(): void {
    while (this.queue.length > 0 && (this.idle.length > 0 || this.workers.size < this.threads)) {
      const worker = this.idle.pop() ?? this.spawn();
      this.run(worker, this.queue.shift()!);
    }
  }

  private spawn(): Worker {
    const worker = startParseWorker();
    this.workers.add(worker);
    // An idle worker that fails leaves the pool; a busy one's task hears of it too (see run).
    // Without a listener, a worker's "error" would be thrown in this thread.
    worker.on("error", () => {});
    worker.once("exit", () => {
      this.workers.delete(worker);
      const idle = this.idle.indexOf(worker);
      if (idle !== -1) this.idle.splice(idle, 1);
    });
    return worker;
  }

  private run(worker: Worker, task: Task): void {
    // A busy worker keeps the process alive (an input is on its way); an idle one does not.
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
      this.workers.delete(worker);
      void worker.terminate();
      const reason = cause instanceof Error ? cause.message : `exited with code ${String(cause)}`;
      task.reject(new ParseWorkerFailedError(`a parse worker failed: ${reason}`));
      this.dispatch();
    };
    worker.on("message", onMessage);
    worker.on("error", onFailure);
    worker.on("exit", onFailure);
    // A copy goes to the worker (structured clone): the caller keeps its bytes, to parse again or keep.
    worker.postMessage(task.request);
  }
}

/** Starts a process's parse workers ahead of its first input (see ParsePool.warm). */
export function startParseWorkers(threads: number): void {
  if (threads > 0) parsePool(threads).warm();
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
