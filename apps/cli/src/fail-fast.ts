import { bindPort } from "@dmarc-ledger/api/listen";
import { parseSettings } from "@dmarc-ledger/config";
import { serviceSettings } from "./settings.js";

/**
 * What would make `start` fail at once, found with light modules only: a wrong setting, or a
 * port that cannot be bound (tried, and released again for the service to bind). `start`
 * itself checks both again; this only makes the answer come within a second. Null when fine.
 */
export async function failFastBeforeStart(env: NodeJS.ProcessEnv): Promise<string | null> {
  try {
    const settings = parseSettings(serviceSettings, env);
    if (settings.PORT !== 0) await (await bindPort(settings.PORT)).close(0);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
