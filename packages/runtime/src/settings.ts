import { url } from "@dmarc-ledger/config";
import { databaseSettings } from "@dmarc-ledger/db/settings";

/** Every variable openRuntime reads: the database and, optionally, KurrentDB for the events. */
export const runtimeSettings = {
  ...databaseSettings,
  EVENTSTORE_URL: url(["kurrentdb", "kurrentdb+discover", "esdb", "esdb+discover", "kdb", "kdb+discover"]),
};
