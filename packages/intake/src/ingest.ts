import { createHash } from "node:crypto";
import {
  type AggregateHeader,
  type AggregateRow,
  type DroppedRows,
  type FailureReport,
  type ParseOptions,
  ReportParseError,
  readReports,
} from "@dmarc-ledger/dmarc-reports";
import {
  type AppendResult,
  type ExpectedRevision,
  type NewEvent,
  type ReadStreamOptions,
  type RecordedEvent,
  WrongExpectedVersionError,
} from "@dmarc-ledger/event-store";
import {
  type AggregateReportReceived,
  type EventMetadata,
  newEvent,
  rawKeepLimit,
  sha256Hex,
  streams,
} from "@dmarc-ledger/events";
import type { TlsReport } from "@dmarc-ledger/tls-reports";
import type { InputBytes } from "./input-bytes.js";
import { type ParsedInput, parseInput, rowBytes } from "./parse-input.js";
import { clearSealer, type PersonalSealer } from "./personal-sealer.js";
import { domainNamedByRefused } from "./rejected-domain.js";

/** About 1 MiB of JSON per event at the size real rows have. */
export const rowsPerChunk = 2000;
/**
 * A chunk also ends once its rows reach about this much JSON, so that rows carrying many long
 * results cannot make one event (and what reads it) large. Real rows reach 2,000 rows first,
 * so the chunking of real reports, which a resumed import relies on, is unchanged.
 */
export const maxChunkBytes = 4 * 1024 * 1024;
/** Events read at once when counting what an interrupted import already stored. */
const storedChunksPage = 16;

export interface IngestOptions {
  /** How the input reached us: "import:<file>", "upload", "smtp:<message id>". */
  source: string;
  metadata: EventMetadata;
  /** Parser limits; the defaults of packages/dmarc-reports otherwise. */
  parseOptions?: ParseOptions;
  /** See holdMaxBytes; smaller in tests of the two-pass path. */
  holdMaxBytes?: number;
  /** How personal data is stored (personal-sealer.ts); in clear without one. */
  sealer?: PersonalSealer;
}

export type IngestedItem =
  | {
      kind: "aggregate";
      identity: string;
      domain: string;
      rows: number;
      messages: number;
      /** Rows the report held that were left out, by reason (see docs/limits.md). */
      dropped: DroppedRows[];
      status: "stored" | "duplicate" | "resumed";
    }
  | { kind: "failure"; identity: string; domain: string; status: "stored" | "duplicate" }
  /**
   * An SMTP TLS report: `domain` its first policy domain, `domains` all of them (a report is
   * about one domain, RFC 8460 §4, but may name its subdomains' policies too).
   */
  | {
      kind: "tls";
      identity: string;
      domain: string;
      domains: string[];
      sessions: number;
      failedSessions: number;
      status: "stored" | "duplicate";
    }
  /** "already_kept": the same bytes were rejected before and are kept once. */
  | {
      kind: "rejected";
      code: string;
      reason: string;
      sha256: string;
      status: "kept" | "already_kept";
      /** The domain the refused report names, when it says (domainNamedByRefused). */
      domain?: string;
    };

export interface IngestOutcome {
  source: string;
  items: IngestedItem[];
  /** The global position of the last event this input appended, for read-your-writes. */
  lastPosition: bigint | null;
}

/**
 * Where ingest writes its events: the event store itself (each append its own transaction), or
 * one transaction of it, in which the archive's rows commit together with the events.
 */
export interface EventWriter {
  append(stream: string, events: NewEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
}

/**
 * Parses an input and records what it holds as events: aggregate reports (chunked), failure
 * reports, SMTP TLS reports, or the input itself, rejected, with the reason. A report already stored is a
 * duplicate and appends nothing; a report whose append was cut short is resumed.
 */
export async function ingest(
  writer: EventWriter,
  input: InputBytes,
  options: IngestOptions,
): Promise<IngestOutcome> {
  const parsed = await parseInput(input, options.parseOptions, options.holdMaxBytes);
  return storeParsed(writer, input, parsed, options);
}

/** Records what parseInput found in `input` (see ingest). */
export async function storeParsed(
  writer: EventWriter,
  input: InputBytes,
  parsed: ParsedInput,
  options: IngestOptions,
): Promise<IngestOutcome> {
  const outcome: IngestOutcome = { source: options.source, items: [], lastPosition: null };
  const track = (position: bigint) => {
    if (outcome.lastPosition === null || position > outcome.lastPosition) outcome.lastPosition = position;
  };
  let aggregate: AggregateWriter | null = null;
  try {
    if (parsed.kind === "refused") throw parsed.error;
    const items = parsed.kind === "held" ? parsed.items : readReports(input.open(), options.parseOptions);
    for await (const item of items) {
      switch (item.kind) {
        case "aggregate-begin":
          aggregate = AggregateWriter.open(writer, item.header, options, track);
          break;
        case "aggregate-rows":
          await aggregate?.add(item.rows);
          break;
        case "aggregate-end":
          if (aggregate) outcome.items.push(await aggregate.finish(item.warnings, item.dropped));
          aggregate = null;
          break;
        case "failure":
          outcome.items.push(await storeFailureReport(writer, item.report, options, track));
          break;
        case "tls":
          outcome.items.push(await storeTlsReport(writer, item.report, options, track));
          break;
      }
    }
  } catch (error) {
    outcome.items.push(await storeRejection(writer, input, error, options, track));
  }
  return outcome;
}

/**
 * Appends an aggregate report chunk by chunk with the expected revision, so memory stays bounded
 * and a chunk is never written twice. Chunking is deterministic, so a resumed import skips the
 * chunks that are already stored.
 */
class AggregateWriter {
  private pending: AggregateRow[] = [];
  private pendingBytes = 0;
  private nextChunk = 0;
  private rows = 0;
  private messages = 0;
  /**
   * What an earlier delivery stored of this report; null until the first chunk's append finds
   * the stream there. Most reports are new, so the stream is not read before that append.
   */
  private stored: { chunks: number; complete: boolean } | null = null;
  /** Another delivery of the same report appended a chunk we were about to. */
  private lostRace = false;

  private constructor(
    private readonly store: EventWriter,
    private readonly header: AggregateHeader,
    private readonly options: IngestOptions,
    private readonly track: (position: bigint) => void,
  ) {}

  static open(
    store: EventWriter,
    header: AggregateHeader,
    options: IngestOptions,
    track: (position: bigint) => void,
  ): AggregateWriter {
    return new AggregateWriter(store, header, options, track);
  }

  async add(rows: AggregateRow[]): Promise<void> {
    for (const row of rows) {
      this.pending.push(row);
      this.pendingBytes += rowBytes(row);
      this.rows++;
      this.messages += row.count;
      if (this.pending.length === rowsPerChunk || this.pendingBytes >= maxChunkBytes) await this.flush(false);
    }
  }

  async finish(warnings: string[], dropped: DroppedRows[]): Promise<IngestedItem> {
    await this.flush(true, warnings);
    const status =
      this.stored?.complete || this.lostRace ? "duplicate" : this.stored === null ? "stored" : "resumed";
    return {
      kind: "aggregate",
      identity: this.header.identity,
      domain: this.header.policy.domain,
      rows: this.rows,
      messages: this.messages,
      dropped,
      status,
    };
  }

  private async flush(last: boolean, warnings: string[] = []): Promise<void> {
    const index = this.nextChunk++;
    const rows = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.lostRace || this.stored?.complete || (this.stored && index < this.stored.chunks)) return;
    const { identity, schema, orgName, organization, email, reportId, begin, end, policy } = this.header;
    const event = newEvent(
      "AggregateReportReceived",
      {
        identity,
        schema,
        orgName,
        organization,
        email,
        reportId,
        begin,
        end,
        policy,
        rows,
        chunk: { index, last },
        source: this.options.source,
        warnings: last ? warnings : [],
      },
      this.options.metadata,
    );
    const expected = index === 0 ? "no_stream" : BigInt(index - 1);
    try {
      const result = await this.store.append(streams.aggregateReport(identity), [event], expected);
      this.track(result.position);
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      if (index === 0 && this.stored === null) {
        // The report is there, whole or in part: stored before (and perhaps cut short), or being
        // stored by another delivery now. Chunks are deterministic, so its chunks are ours: go on
        // after them, if anything is left.
        this.stored = await this.storedSoFar();
        return;
      }
      // Another delivery appended this chunk first: leave the rest to it.
      this.lostRace = true;
    }
  }

  /** Page by page: a stored report can be 500 chunks of 1 MiB. */
  private async storedSoFar(): Promise<{ chunks: number; complete: boolean }> {
    const stream = streams.aggregateReport(this.header.identity);
    let chunks = 0;
    let last: AggregateReportReceived | undefined;
    for (;;) {
      const page = await this.store.readStream(stream, {
        fromRevision: BigInt(chunks),
        limit: storedChunksPage,
      });
      chunks += page.length;
      if (page.length > 0) last = page.at(-1)!.data as AggregateReportReceived;
      if (page.length < storedChunksPage) break;
    }
    return { chunks, complete: last?.chunk.last ?? false };
  }
}

async function storeFailureReport(
  store: EventWriter,
  report: FailureReport,
  options: IngestOptions,
  track: (position: bigint) => void,
): Promise<IngestedItem> {
  const { warnings, subject, sourceIp, headers, originalMailFrom, originalRcptTo, ...fields } = report;
  const personal = await (options.sealer ?? clearSealer).failureReport(report);
  const event = newEvent(
    "ForensicReportReceived",
    { ...fields, personal, source: options.source, warnings },
    options.metadata,
  );
  try {
    const result = await store.append(streams.failureReport(report.identity), [event], "no_stream");
    track(result.position);
    return { kind: "failure", identity: report.identity, domain: report.reportedDomain, status: "stored" };
  } catch (error) {
    if (!(error instanceof WrongExpectedVersionError)) throw error;
    return { kind: "failure", identity: report.identity, domain: report.reportedDomain, status: "duplicate" };
  }
}

async function storeTlsReport(
  store: EventWriter,
  report: TlsReport,
  options: IngestOptions,
  track: (position: bigint) => void,
): Promise<IngestedItem> {
  const { identity, organization, contactInfo, reportId, begin, end, policies, warnings } = report;
  const event = newEvent(
    "TlsReportReceived",
    { identity, organization, contactInfo, reportId, begin, end, policies, source: options.source, warnings },
    options.metadata,
  );
  const domains = [
    ...new Set(policies.map((policy) => policy.policyDomain).filter((domain) => domain !== "")),
  ];
  let sessions = 0;
  let failedSessions = 0;
  for (const policy of policies) {
    sessions += policy.successfulSessions + policy.failedSessions;
    failedSessions += policy.failedSessions;
  }
  const item = {
    kind: "tls",
    identity,
    domain: domains[0] ?? "",
    domains,
    sessions,
    failedSessions,
  } as const;
  try {
    const result = await store.append(streams.tlsReport(identity), [event], "no_stream");
    track(result.position);
    return { ...item, status: "stored" };
  } catch (error) {
    if (!(error instanceof WrongExpectedVersionError)) throw error;
    return { ...item, status: "duplicate" };
  }
}

/** Keeps what we could not process, with the reason, so it can be re-processed after a fix. */
async function storeRejection(
  store: EventWriter,
  input: InputBytes,
  error: unknown,
  options: IngestOptions,
  track: (position: bigint) => void,
): Promise<IngestedItem> {
  const code = error instanceof ReportParseError ? error.code : "internal_error";
  const reason = error instanceof Error ? error.message : String(error);
  const size = await input.size();
  const raw = size <= rawKeepLimit ? await input.readAll() : null;
  const sha256 = raw ? sha256Hex(raw) : await hashStream(input);
  const domain = raw ? domainNamedByRefused(raw) : undefined;
  const named = domain ? { domain } : {};
  const event = newEvent(
    "ReportRejected",
    {
      source: options.source,
      reason,
      code,
      sha256,
      bytes: size,
      raw: raw ? await (options.sealer ?? clearSealer).rejectedInput(raw) : null,
    },
    options.metadata,
  );
  try {
    const result = await store.append(streams.rejectedInput(sha256), [event], "no_stream");
    track(result.position);
    return { kind: "rejected", code, reason, sha256, status: "kept", ...named };
  } catch (error) {
    if (!(error instanceof WrongExpectedVersionError)) throw error;
    return { kind: "rejected", code, reason, sha256, status: "already_kept", ...named };
  }
}

async function hashStream(input: InputBytes): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of input.open()) hash.update(chunk);
  return hash.digest("hex");
}
