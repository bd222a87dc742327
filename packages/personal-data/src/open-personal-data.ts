import { ConfigError } from "@dmarc-ledger/config";
import { DataKeys, type KeysHandle } from "./data-keys.js";
import { masterKeysFrom } from "./master-keys.js";

/**
 * The data keys of a process, from MASTER_KEY (see masterKeysFrom; `dataDir` is the embedded data
 * directory, null under DATABASE_URL), after the data_key table's migration. Refuses a master key
 * that did not wrap the stored keys, naming MASTER_KEY, before the process seals anything.
 */
export async function openDataKeys(
  db: KeysHandle,
  env: NodeJS.ProcessEnv,
  dataDir: string | null,
): Promise<DataKeys> {
  const keys = new DataKeys(masterKeysFrom(env, dataDir));
  const unknown = await keys.unknownMasterKeyIds(db);
  if (unknown.length > 0) {
    throw new ConfigError([
      {
        variable: "MASTER_KEY",
        message: `is not the key that wrapped the stored data keys (master key id ${unknown.join(", ")}): set MASTER_KEY to that key, or, to rotate, MASTER_KEY to the new one and MASTER_KEY_PREVIOUS to the old one`,
      },
    ]);
  }
  return keys;
}
