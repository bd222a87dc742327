export { type AnswerAges, type DueIp, dueAmong, isDue, staleSourceIps } from "./due-source-ips.js";
export { lookupSourceName, type SourceNameAnswer } from "./lookup-source-name.js";
export { reverseName, sameAddress } from "./reverse-name.js";
export {
  type SourceIpResolverSettings,
  sourceIpResolverSettingsFromEnv,
  sourceIpResolverSettingsShape,
} from "./settings.js";
export {
  type RunningSourceIpResolver,
  type SourceIpResolverOptions,
  startSourceIpResolver,
} from "./source-ip-resolver.js";
export { startSourceIpResolverFromSettings } from "./start-from-settings.js";
