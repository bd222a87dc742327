// Only the settings modules (subpath exports): main.ts checks them before the service's own
// modules are loaded, so that a wrong setting fails within a second.
import { apiSettings } from "@dmarc-ledger/api/settings";
import { ConfigError, parseSettings, type SettingProblem } from "@dmarc-ledger/config";
import { dnsSettingsFromEnv } from "@dmarc-ledger/dns/settings";
import { eventBrokerSettingsFromEnv } from "@dmarc-ledger/event-feed/settings";
import { intakeSettingsFromEnv } from "@dmarc-ledger/intake/settings";
import { intakeChannelSettingsFromEnv } from "@dmarc-ledger/intake-process/settings";
import { onboardingSettingsFromEnv } from "@dmarc-ledger/onboarding/settings";
import { personalDataSettingsFromEnv } from "@dmarc-ledger/personal-data/settings";
import { loggingSettings, stopSettings } from "@dmarc-ledger/process/settings";
import { projectorSettings } from "@dmarc-ledger/projector/settings";
import { runtimeSettings } from "@dmarc-ledger/runtime/settings";
import { safeSpfRefreshSettingsFromEnv, safeSpfSettings } from "@dmarc-ledger/safe-spf-service/settings";
import { sourceIpResolverSettingsFromEnv } from "@dmarc-ledger/source-names/settings";
import { userSettingsFromEnv, userSettingsShape } from "@dmarc-ledger/users/settings";

/**
 * The settings of `dmarc-ledger start`'s own shape: the runtime, the API, the Safe SPF process,
 * the projector and the logger. Other processes compose their shapes the same way.
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

/**
 * Every setting `start` reads: its own and those of the parts it runs beside the API (intake,
 * DNS server, refresher, source names, onboarding, the dashboard's users, the master key), every wrong variable of every part named in
 * one ConfigError (a variable several parts read, once). Light modules only: main.ts runs this
 * before it loads the service, and `start` again before it binds the port.
 */
export function startSettings(env: NodeJS.ProcessEnv) {
  let settings: ReturnType<typeof parseSettings<typeof serviceSettings>> | undefined;
  const readers = [
    () => {
      settings = parseSettings(serviceSettings, env);
    },
    () => intakeChannelSettingsFromEnv(env),
    () => intakeSettingsFromEnv(env),
    () => dnsSettingsFromEnv(env, { defaultPort: 5353, required: false }),
    () => safeSpfRefreshSettingsFromEnv(env),
    () => sourceIpResolverSettingsFromEnv(env),
    () => onboardingSettingsFromEnv(env),
    () => userSettingsFromEnv(env),
    () => personalDataSettingsFromEnv(env),
    () => eventBrokerSettingsFromEnv(env),
  ];
  const problems: SettingProblem[] = [];
  for (const read of readers) {
    try {
      read();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      for (const problem of error.problems) {
        if (!problems.some((known) => known.variable === problem.variable)) problems.push(problem);
      }
    }
  }
  if (problems.length > 0 || !settings) throw new ConfigError(problems);
  return settings;
}
