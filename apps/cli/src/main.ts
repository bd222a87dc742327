#!/usr/bin/env node
import { consoleIO } from "./io.js";
import { prepareForOneCommand } from "./short-command.js";

const argv = process.argv.slice(2);
await prepareForOneCommand(argv, process.env);
// Loaded for `start` only: the settings of every part it runs take a tenth of a second to load.
const refusal =
  argv[0] === "start" ? await (await import("./fail-fast.js")).failFastBeforeStart(process.env) : null;
let code: number;
if (refusal) {
  consoleIO.err(`error: ${refusal}`);
  code = 1;
} else {
  // Loaded only now: the service's modules take seconds to load on a busy machine.
  const { runCli } = await import("./program.js");
  code = await runCli(argv, consoleIO, process.env);
}
// The command is done: exit once what it printed is written. Left to end by itself, the process
// would first wait for work left on node's worker threads: after PGlite, the optimising compiler
// keeps compiling its WebAssembly for a few tenths of a second more, for no one. A handle some
// library left open (a timer, a socket) does not keep it alive either.
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(code);

function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write("", () => resolve()));
}
