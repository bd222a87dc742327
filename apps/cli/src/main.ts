#!/usr/bin/env node
import { failFastBeforeStart } from "./fail-fast.js";
import { consoleIO } from "./io.js";

const argv = process.argv.slice(2);
const refusal = argv[0] === "start" ? await failFastBeforeStart(process.env) : null;
let code: number;
if (refusal) {
  consoleIO.err(`error: ${refusal}`);
  code = 1;
} else {
  // Loaded only now: the service's modules take seconds to load on a busy machine.
  const { runCli } = await import("./program.js");
  code = await runCli(argv, consoleIO, process.env);
}
process.exitCode = code;
// The command is done: a handle some library left open (a timer, a socket) must not keep the
// process alive. A clean process has exited before this fires.
setTimeout(() => process.exit(code), 2000).unref();
