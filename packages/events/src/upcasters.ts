import { currentSchemaVersion, type EventPayloads, type EventType } from "./catalogue.js";

/**
 * Lifts an event payload from the version it was written with to the current one, one version at
 * a time. Register a step as `upcasters[type][fromVersion] = (old) => next` when a payload changes.
 */
type Step = (data: unknown) => unknown;
const upcasters: { [K in EventType]?: Record<number, Step> } = {
  AlertRaised: {
    // v2 lists the finding's members and says whether its day may still change: a v1 alert was
    // about one thing, its figures final as far as it knew, and updated nothing.
    1: (old) => ({ ...(old as object), items: [], soFar: false, revises: null }),
  },
  ForensicReportReceived: {
    1: (old) => {
      const { subject, sourceIp, headers, originalMailFrom, originalRcptTo, ...rest } = old as Record<
        string,
        unknown
      >;
      return {
        ...rest,
        personal: { clear: { subject, sourceIp, headers, originalMailFrom, originalRcptTo } },
      };
    },
  },
  ReportRejected: {
    1: (old) => {
      const { rawBase64, ...rest } = old as Record<string, unknown>;
      return { ...rest, raw: typeof rawBase64 === "string" ? { clear: { base64: rawBase64 } } : null };
    },
  },
  UserCreated: {
    // v1 held the address in clear: it stays so in those events (docs/privacy.md).
    1: (old) => {
      const { email, ...rest } = old as { email: string };
      return { ...rest, email: { clear: email } };
    },
  },
  SourceIpResolved: {
    // v2 added the source's naming (service, AS, country). An answer of v1 was given without
    // one: it says nothing rather than what today's databases would say.
    1: (data) => ({ ...(data as object), naming: null }),
    // v3 says what named the service, and marks special-purpose addresses: a v2 naming named a
    // service by its forward-confirmed name only.
    2: (data) => {
      const old = data as { naming: { service: unknown } | null };
      const naming = old.naming && {
        ...old.naming,
        namedBy: old.naming.service ? "rdns" : null,
        authDomain: null,
        addressRange: null,
      };
      return { ...old, naming };
    },
  },
  SenderApprovalSet: {
    // v2 records the service's addresses at the decision: a v1 decision did not, so which
    // addresses it meant is unknown, and nothing is said to have joined since.
    1: (data) => ({ ...(data as object), members: null }),
  },
  RetentionRun: {
    // v2 counts the aggregate facts removed; before it, they were always kept.
    1: (data) => {
      const old = data as { removed: object };
      return { ...old, removed: { ...old.removed, aggregateRows: 0 } };
    },
  },
};

export class UnknownSchemaVersionError extends Error {
  override readonly name = "UnknownSchemaVersionError";
}

export function upcast<K extends EventType>(type: K, version: number, data: unknown): EventPayloads[K] {
  const target = currentSchemaVersion[type];
  if (version > target) {
    throw new UnknownSchemaVersionError(
      `${type} v${version} was written by a newer version of dmarc-ledger (this one reads up to v${target})`,
    );
  }
  let lifted = data;
  for (let from = version; from < target; from++) {
    const step = upcasters[type]?.[from];
    if (!step) throw new UnknownSchemaVersionError(`no upcaster for ${type} from v${from}`);
    lifted = step(lifted);
  }
  return lifted as EventPayloads[K];
}
