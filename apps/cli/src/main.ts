#!/usr/bin/env node
import { consoleIO } from "./io.js";
import { runCli } from "./program.js";

const code = await runCli(process.argv.slice(2), consoleIO, process.env);
process.exitCode = code;
// The command is done: a handle some library left open (a timer, a socket) must not keep the
// process alive. A clean process has exited before this fires.
setTimeout(() => process.exit(code), 2000).unref();
