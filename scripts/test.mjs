// `pnpm test`, after `pnpm lint`: `pnpm typecheck` and `pnpm test:unit` side by side, failing when
// either fails. The type check takes one core for 10 to 20 s; the tests do not keep both cores
// busy all the time (starting up, and the last files), and it takes its share of those moments
// instead of holding the tests back.
//
// The tests' output streams as it comes. The type check's is held and printed, with its verdict,
// when it ends: long before the tests, so that their closing line ("vitest: N passed, ...")
// is still the last one (should the type check end after them, its lines come after it).
import { spawn } from "node:child_process";

const typecheck = spawn("pnpm", ["typecheck"], { stdio: ["ignore", "pipe", "pipe"] });
const typecheckOutput = [];
typecheck.stdout.on("data", (chunk) => typecheckOutput.push(chunk));
typecheck.stderr.on("data", (chunk) => typecheckOutput.push(chunk));
const typechecked = new Promise((resolve) =>
  typecheck.once("close", (code) => {
    process.stderr.write(Buffer.concat(typecheckOutput));
    process.stderr.write(code === 0 ? "typecheck: passed\n" : `typecheck: FAILED (exit ${code})\n`);
    resolve(code ?? 1);
  }),
);

const unit = spawn("pnpm", ["test:unit", ...process.argv.slice(2)], { stdio: "inherit" });
const tested = new Promise((resolve) => unit.once("close", (code) => resolve(code ?? 1)));

const [typecheckCode, unitCode] = await Promise.all([typechecked, tested]);
process.exit(typecheckCode !== 0 ? typecheckCode : unitCode);
