/**
 * Small integer codes for the elements of an aggregate report. The reader keeps a stack of these and
 * switches on them: on a 100 MB report that is millions of tags, and string switches showed in profiles.
 */
export const El = {
  other: 0,
  feedback: 1,
  version: 2,
  reportMetadata: 3,
  orgName: 4,
  email: 5,
  reportId: 6,
  dateRange: 7,
  begin: 8,
  end: 9,
  policyPublished: 10,
  domain: 11,
  adkim: 12,
  aspf: 13,
  p: 14,
  sp: 15,
  np: 16,
  pct: 17,
  fo: 18,
  testing: 19,
  discoveryMethod: 20,
  record: 21,
  row: 22,
  sourceIp: 23,
  count: 24,
  policyEvaluated: 25,
  disposition: 26,
  dkim: 27,
  spf: 28,
  reason: 29,
  type: 30,
  comment: 31,
  identifiers: 32,
  headerFrom: 33,
  envelopeFrom: 34,
  envelopeTo: 35,
  authResults: 36,
  selector: 37,
  result: 38,
  humanResult: 39,
  scope: 40,
  schema: 41,
} as const;

/** Code of a local name: a switch on the length first, cheaper than hashing each tag name into a Map. */
function localCode(name: string): number {
  switch (name.length) {
    case 1:
      if (name === "p") return El.p;
      return El.other;
    case 2:
      if (name === "sp") return El.sp;
      if (name === "np") return El.np;
      if (name === "fo") return El.fo;
      return El.other;
    case 3:
      if (name === "end") return El.end;
      if (name === "pct") return El.pct;
      if (name === "row") return El.row;
      if (name === "spf") return El.spf;
      return El.other;
    case 4:
      if (name === "aspf") return El.aspf;
      if (name === "dkim") return El.dkim;
      if (name === "type") return El.type;
      return El.other;
    case 5:
      if (name === "email") return El.email;
      if (name === "begin") return El.begin;
      if (name === "adkim") return El.adkim;
      if (name === "count") return El.count;
      if (name === "scope") return El.scope;
      return El.other;
    case 6:
      if (name === "domain") return El.domain;
      if (name === "record") return El.record;
      if (name === "reason") return El.reason;
      if (name === "result") return El.result;
      if (name === "schema") return El.schema;
      return El.other;
    case 7:
      if (name === "version") return El.version;
      if (name === "testing") return El.testing;
      if (name === "comment") return El.comment;
      return El.other;
    case 8:
      if (name === "feedback") return El.feedback;
      if (name === "org_name") return El.orgName;
      if (name === "selector") return El.selector;
      return El.other;
    case 9:
      if (name === "report_id") return El.reportId;
      if (name === "source_ip") return El.sourceIp;
      return El.other;
    case 10:
      if (name === "date_range") return El.dateRange;
      return El.other;
    case 11:
      if (name === "disposition") return El.disposition;
      if (name === "identifiers") return El.identifiers;
      if (name === "header_from") return El.headerFrom;
      if (name === "envelope_to") return El.envelopeTo;
      return El.other;
    case 12:
      if (name === "auth_results") return El.authResults;
      if (name === "human_result") return El.humanResult;
      return El.other;
    case 13:
      if (name === "envelope_from") return El.envelopeFrom;
      return El.other;
    case 15:
      if (name === "report_metadata") return El.reportMetadata;
      return El.other;
    case 16:
      if (name === "policy_published") return El.policyPublished;
      if (name === "discovery_method") return El.discoveryMethod;
      if (name === "policy_evaluated") return El.policyEvaluated;
      return El.other;
    default:
      return El.other;
  }
}

/** Code of a tag name, namespace prefix ignored. */
export function elementCode(name: string): number {
  const code = localCode(name);
  if (code !== El.other) return code;
  const colon = name.indexOf(":");
  return colon < 0 ? El.other : localCode(name.slice(colon + 1));
}

/** Elements whose text is whitespace between children (dkim/spf depend on their parent). */
export function isContainer(code: number): boolean {
  switch (code) {
    case El.feedback:
    case El.reportMetadata:
    case El.dateRange:
    case El.policyPublished:
    case El.record:
    case El.row:
    case El.policyEvaluated:
    case El.reason:
    case El.identifiers:
    case El.authResults:
    case El.schema:
    case El.other:
      return true;
    default:
      return false;
  }
}
