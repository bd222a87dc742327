// Only the settings modules (subpath exports): main.ts checks them before the service's own
// modules are loaded, so that a wrong setting fails within a second.
import { apiSettings } from "@dmarc-ledger/api/settings";
import { loggingSettings, stopSettings } from "@dmarc-ledger/process/settings";
import { projectorSettings } from "@dmarc-ledger/projector/settings";
import { runtimeSettings } from "@dmarc-ledger/runtime/settings";
import { safeSpfSettings } from "@dmarc-ledger/safe-spf-service/settings";
import { userSettingsShape } from "@dmarc-ledger/users/settings";

/**
 * Everything `dmarc-ledger start` reads, validated at once so that every wrong variable is named
 * in one message. Other processes compose their shapes the same way.
 */
export const serviceSettings = {
  ...runtimeSettings,
  ...apiSettings,
  ...safeSpfSettings,
  ...projectorSettings,
  ...loggingSettings,
  ...stopSettings,
  ...userSettingsShape,
};
