export { type AsnAnswer, AsnTable } from "./asn-table.js";
export { type AnswerAges, type DueIp, dueAmong, isDue, staleSourceIps } from "./due-source-ips.js";
export { lookupSourceName, type SourceNameAnswer } from "./lookup-source-name.js";
export { type NetworkDatabases, openNetworkDatabases } from "./network-databases.js";
export { reverseName, sameAddress } from "./reverse-name.js";
export { type ServiceMap, serviceMap } from "./service-map.js";
export {
  readServiceMapFile,
  type SenderService,
  type ServiceMapFile,
  ServiceMapFileError,
} from "./service-map-file.js";
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
export { lazySourceNamer, type SourceNamer, sourceNamer } from "./source-namer.js";
export { startSourceIpResolverFromSettings } from "./start-from-settings.js";
