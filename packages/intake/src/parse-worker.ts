/**
 * A parse worker's thread: prepares one input at a time (see parse-pool.ts). Only the parser and
 * node's crypto and zlib are loaded here; nothing that holds a connection.
 */
import { parentPort } from "node:worker_threads";
import { cloneRefusal, type PrepareRequest, prepareInput } from "./prepare.js";

const port = parentPort;
if (!port) throw new Error("parse-worker.ts runs as a worker thread (see parse-pool.ts)");

// The parser is loaded: the pool may send inputs.
port.postMessage({ ready: true });

port.on("message", async (request: PrepareRequest) => {
  const { sha256, compressed, parsed } = await prepareInput(request);
  const transfer = compressed ? [ownBuffer(compressed)] : [];
  port.postMessage(
    {
      sha256,
      compressed: compressed && new Uint8Array(transfer[0]!),
      parsed: parsed.kind === "refused" ? { kind: "refused", refusal: cloneRefusal(parsed.error) } : parsed,
    },
    transfer,
  );
});

/** The bytes in an ArrayBuffer of their own, which can be transferred without detaching others'. */
function ownBuffer(bytes: Uint8Array): ArrayBuffer {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength)
    return bytes.buffer as ArrayBuffer;
  // A copy of exactly these bytes (Buffer's slice would be a view of the same memory).
  return new Uint8Array(bytes).buffer as ArrayBuffer;
}
