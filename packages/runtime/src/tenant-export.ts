import type { AnySchema } from "@dmarc-ledger/db";
import { type EventStore, type NewEvent, WrongExpectedVersionError } from "@dmarc-ledger/event-store";
import {
  type AggregateReportReceived,
  decodeEvent,
  type EventMetadata,
  type ForensicPersonalFields,
  type Personal,
  type Region,
  streamCategory,
} from "@dmarc-ledger/events";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import { tenantReportDomainNames } from "@dmarc-ledger/report-read-models";
import type { TenancySchema } from "@dmarc-ledger/tenancy";
import { type Kysely, sql } from "kysely";

/** The first line of an export. */
export interface ExportHeader {
  format: "dmarc-ledger-tenant";
  version: 1;
  tenantId: string;
  name: string;
  exportedAt: string;
}

/** Every other line: one event, as the store holds it (personal fields opened: the tenant's data). */
export interface ExportedEvent {
  stream: string;
  revision: string;
  id: string;
  type: string;
  data: unknown;
  metadata: EventMetadata;
  recordedAt: string;
}

/**
 * A failure report whose data key was shredded, exported and imported as such: still counted, its
 * fields removed. No key has this id, so it never opens.
 */
const shreddedKeyId = "shredded";

const pageSize = 500;

export class TenantImportError extends Error {
  override readonly name = "TenantImportError";
}

/**
 * Every fact of a tenant, as NDJSON lines (data portability; docs/privacy.md), in the store's
 * order: its own stream (the tenant, its keys' hashes, its policy), its domains' streams (groups,
 * Safe SPF), the aggregate and failure reports of its report domains, and the reverse-DNS answers
 * of their sources. Failure reports go with their personal fields opened (the export is the
 * tenant's copy of its data), those retention or erasure removed from /forensic left out, and
 * those whose key is gone marked shredded. Not in it: the dashboard's people (their passwords
 * are not events: they are invited again), the claims of domain trees (the projector claims them
 * for existing domains), rejected inputs, the retention and erasure history.
 * Reads the store once, page by page; `onProgress` is told the position reached and the head.
 */
export async function* exportTenant(
  runtime: { db: Kysely<AnySchema>; store: EventStore },
  keys: DataKeys,
  tenantId: string,
  onProgress?: (position: bigint, head: bigint) => void,
): AsyncGenerator<string> {
  const db = runtime.db as Kysely<TenancySchema>;
  const tenant = await db
    .selectFrom("tenant")
    .select(["tenant_id", "name"])
    .where("tenant_id", "=", tenantId)
    .executeTakeFirst();
  if (!tenant) throw new TenantImportError(`There is no tenant ${tenantId}.`);
  const header: ExportHeader = {
    format: "dmarc-ledger-tenant",
    version: 1,
    tenantId,
    name: tenant.name,
    exportedAt: new Date().toISOString(),
  };
  yield JSON.stringify(header);
  const domains = new Set(
    (await db.selectFrom("domain").select("domain").where("tenant_id", "=", tenantId).execute()).map(
      (row) => row.domain,
    ),
  );
  const reportDomains = new Set(await tenantReportDomainNames(runtime.db, tenantId));
  // The failure reports /forensic still lists: retention and erasure dropped the others.
  const { rows: listed } = await sql<{ identity: string }>`
    select identity from forensic_report where domain = any(${[...reportDomains]}::text[])`.execute(
    runtime.db,
  );
  const forensic = new Set(listed.map((row) => row.identity));
  const sources = new Set<string>();
  const head = (await runtime.store.headPosition()) ?? 0n;
  let from: "start" | bigint = "start";
  for (;;) {
    const page = await runtime.store.readAll(from, pageSize);
    if (page.length === 0) break;
    for (const recorded of page) {
      const event = decodeEvent(recorded);
      if (!event) continue;
      let data: unknown = recorded.data;
      let metadata = recorded.metadata;
      switch (streamCategory(recorded.stream)) {
        case "tenant":
          if (recorded.stream !== `tenant-${tenantId}`) continue;
          break;
        case "domain":
          if (!domains.has(recorded.stream.slice("domain-".length))) continue;
          break;
        case "aggregate-report": {
          const report = event.data as AggregateReportReceived;
          if (!reportDomains.has(report.policy.domain.toLowerCase())) continue;
          for (const row of report.rows) sources.add(row.sourceIp);
          break;
        }
        case "tls-report": {
          // An SMTP TLS report counts for the tenant that has one of its policy domains.
          if (event.type !== "TlsReportReceived") continue;
          if (!event.data.policies.some((policy) => reportDomains.has(policy.policyDomain))) continue;
          break;
        }
        case "failure-report": {
          if (event.type !== "ForensicReportReceived" || !forensic.has(event.data.identity)) continue;
          const [opened] = await keys.open(runtime.db, [event.data.personal]);
          const personal: Personal<ForensicPersonalFields> = opened
            ? { clear: opened }
            : { sealed: { keyId: shreddedKeyId, tenantId, data: "" } };
          // Written as the current version: the personal fields are an envelope from v2 on.
          data = { ...event.data, personal };
          metadata = { ...metadata, schemaVersion: 2 };
          break;
        }
        case "source-ip":
          if (!sources.has(recorded.stream.slice("source-ip-".length))) continue;
          break;
        default:
          continue;
      }
      const line: ExportedEvent = {
        stream: recorded.stream,
        revision: recorded.revision.toString(),
        id: recorded.id,
        type: recorded.type,
        data,
        metadata,
        recordedAt: recorded.recordedAt.toISOString(),
      };
      yield JSON.stringify(line);
    }
    from = page.at(-1)!.position;
    onProgress?.(from, head);
  }
}

/**
 * Brings an export into this deployment: every event appended to its stream at the revision it
 * had, so the tenant and its domains must be new here (an error names the first that is not); a
 * report already here (the same report, delivered to both) is kept once. Failure reports' fields
 * are sealed under this deployment's keys; the tenant takes this deployment's region. Returns
 * how many events were appended and how many were here already.
 */
export async function importTenant(
  runtime: { db: Kysely<AnySchema>; store: EventStore },
  keys: DataKeys,
  lines: AsyncIterable<string>,
  region: Region,
): Promise<{ tenantId: string; appended: number; alreadyHere: number; lastPosition: bigint | null }> {
  let header: ExportHeader | null = null;
  let appended = 0;
  let alreadyHere = 0;
  let lastPosition: bigint | null = null;
  const skipped = new Set<string>();
  const sealedAt = new Date();
  for await (const text of lines) {
    if (text.trim() === "") continue;
    if (!header) {
      const first = JSON.parse(text) as Partial<ExportHeader>;
      if (first.format !== "dmarc-ledger-tenant" || first.version !== 1) {
        throw new TenantImportError("This is not an export of dmarc-ledger tenant export (version 1).");
      }
      header = first as ExportHeader;
      continue;
    }
    const line = JSON.parse(text) as ExportedEvent;
    if (skipped.has(line.stream)) continue;
    let data = line.data as Record<string, unknown>;
    if (line.type === "TenantCreated") data = { ...data, region };
    if (line.type === "ForensicReportReceived") {
      const personal = data.personal as Personal<ForensicPersonalFields>;
      if ("clear" in personal) {
        data = {
          ...data,
          personal: { sealed: await keys.seal(runtime.db, header.tenantId, sealedAt, personal.clear) },
        };
      }
    }
    const event: NewEvent = { id: line.id, type: line.type, data, metadata: line.metadata };
    const revision = BigInt(line.revision);
    const category = streamCategory(line.stream);
    try {
      const result = await runtime.store.append(
        line.stream,
        [event],
        category === "source-ip" ? "any" : revision === 0n ? "no_stream" : revision - 1n,
      );
      lastPosition = result.position;
      appended++;
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
      if (
        (category === "aggregate-report" || category === "failure-report" || category === "tls-report") &&
        revision === 0n
      ) {
        skipped.add(line.stream);
        alreadyHere++;
        continue;
      }
      throw new TenantImportError(
        `${line.stream} is in this deployment already (${line.type} at revision ${line.revision}): the tenant or one of its domains is here; nothing after it was imported.`,
      );
    }
  }
  if (!header) throw new TenantImportError("The file is empty.");
  return { tenantId: header.tenantId, appended, alreadyHere, lastPosition };
}
