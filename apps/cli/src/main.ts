#!/usr/bin/env node
import { consoleIO } from "./io.js";
import { runCli } from "./program.js";

process.exitCode = await runCli(process.argv.slice(2), consoleIO, process.env);
