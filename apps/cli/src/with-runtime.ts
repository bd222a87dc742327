import { DataDirLockedError } from "@dmarc-ledger/db";
import { openRuntime, type Runtime } from "@dmarc-ledger/runtime";
import { CliError } from "./io.js";

/** Opens the runtime for one command and closes it afterwards, whatever happens. */
export async function withRuntime<T>(
  env: NodeJS.ProcessEnv,
  work: (runtime: Runtime) => Promise<T>,
): Promise<T> {
  let runtime: Runtime;
  try {
    runtime = await openRuntime(env);
  } catch (error) {
    if (error instanceof DataDirLockedError) {
      throw new CliError(
        `${error.message} (In embedded mode the running service holds the data directory; stop it, or use DATABASE_URL.)`,
      );
    }
    throw error;
  }
  try {
    return await work(runtime);
  } finally {
    await runtime.close();
  }
}
