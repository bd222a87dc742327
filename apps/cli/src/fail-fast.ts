import { bindPort } from "@dmarc-ledger/api/listen";
import { serviceAnswers } from "./control/control-client.js";
import { alreadyRunningMessage, embeddedControlSocketPath, embeddedDataDir } from "./control/protocol.js";
import { startSettings } from "./settings.js";

/**
 * What would make `start` fail at once, found with light modules only: a wrong setting, a
 * service already running on the embedded data directory (its control socket answers), or a
 * port that cannot be bound (tried, and released again for the service to bind). `start`
 * itself checks the settings and the port again; this only makes the answer come within a
 * second. Null when fine.
 */
export async function failFastBeforeStart(env: NodeJS.ProcessEnv): Promise<string | null> {
  try {
    const settings = startSettings(env);
    if (!settings.DATABASE_URL && (await serviceAnswers(embeddedControlSocketPath(env))))
      return alreadyRunningMessage(embeddedDataDir(env));
    if (settings.PORT !== 0) await (await bindPort(settings.PORT)).close(0);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
