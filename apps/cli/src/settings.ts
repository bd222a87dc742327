import { apiSettings } from "@dmarc-ledger/api";
import { loggingSettings } from "@dmarc-ledger/process";
import { projectorSettings } from "@dmarc-ledger/projector";
import { runtimeSettings } from "@dmarc-ledger/runtime";
import { safeSpfSettings } from "@dmarc-ledger/safe-spf-service";

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
};
