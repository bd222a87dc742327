export { type CheckHostOptions, type CheckHostResult, checkHost, type SpfResult } from "./check-host.js";
export { diffFlattenResults } from "./diff.js";
export { checkEquivalence, type EquivalenceInput, type EquivalenceReport } from "./equivalence.js";
export { type FlattenInput, type FlattenResult, flattenSpf } from "./flatten.js";
export { SpfFlattenError, type SpfFlattenErrorCode } from "./flatten-error.js";
export {
  chainedRecordName,
  MAX_TXT_STRING_BYTES,
  maxRecordBytes,
  type PublishedRecord,
  publishedSetVersion,
  toTxtStrings,
  UDP_MESSAGE_BYTES,
} from "./publish.js";
export {
  formatMechanism,
  isSpfRecord,
  type MechanismKind,
  parseSpfRecord,
  type Qualifier,
  type SpfMechanism,
  type SpfModifier,
  type SpfRecord,
  SpfSyntaxError,
} from "./record-parser.js";
export {
  createOverlayResolver,
  createResolver,
  type DnsAnswer,
  DnsLookupError,
  type DnsRecordType,
  type ResolverOptions,
  type ResolverStats,
  type SpfResolver,
} from "./resolver.js";
