import type { RetentionApplied } from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import { type Kysely, sql, type Transaction } from "kysely";
import type { ReportSchema } from "../schema.js";

/** Headers longer than this are cut and end in "..." (the contract's Headers field). */
export const maxHeaderCharacters = 16384;

export function cutHeaders(headers: string): string {
  const normalised = headers.replace(/\r\n?/g, "\n");
  return normalised.length > maxHeaderCharacters
    ? `${normalised.slice(0, maxHeaderCharacters - 3)}...`
    : normalised;
}

/**
 * The forensic listing, its personal fields sealed as in the event. ForensicId is assigned here, counting up in event order, so that a replay
 * from the first event gives every report the same id again.
 */
export const forensicReportsProjection: Projection<ReportSchema> = {
  name: "forensic_reports",
  tables: ["forensic_report"],
  handles: new Set(["ForensicReportReceived", "RetentionApplied", "TenantErased"]),
  async apply(trx, events) {
    const { last } = await trx
      .selectFrom("forensic_report")
      .select(sql<string>`coalesce(max(forensic_id), 0)::text`.as("last"))
      .executeTakeFirstOrThrow();
    let next = BigInt(last);
    for (const event of events) {
      if (event.type === "RetentionApplied") {
        await dropPersonalRows(trx, event.data.tenantId, event.data);
        continue;
      }
      if (event.type === "TenantErased") {
        for (const scope of [event.data.tenantId, ...event.data.scopes])
          await dropPersonalRows(trx, scope, null);
        continue;
      }
      if (event.type !== "ForensicReportReceived") continue;
      const report = event.data;
      const arrival = report.arrivalDate ? Date.parse(report.arrivalDate) : Number.NaN;
      next++;
      await trx
        .insertInto("forensic_report")
        .values({
          forensic_id: next.toString(),
          identity: report.identity,
          domain: report.reportedDomain.toLowerCase(),
          received: Math.floor((Number.isNaN(arrival) ? event.recordedAt.getTime() : arrival) / 1000),
          amount: report.incidents,
          // As the event holds it: opened (and its headers cut) when read, while its key exists.
          personal: JSON.stringify(report.personal),
          tenant_id: "sealed" in report.personal ? report.personal.sealed.tenantId : null,
          recorded: Math.floor(event.recordedAt.getTime() / 1000),
          feedback_type: report.feedbackType || null,
          auth_failure: report.authFailure,
          delivery_result: report.deliveryResult,
        })
        .onConflict((oc) => oc.column("identity").doNothing())
        .execute();
    }
  },
};

/** The tenant id of data no tenant owned when it arrived (packages/personal-data's noTenant). */
const noTenant = "-";

/**
 * Rows of a tenant that retention (those stored before its cutoff) or erasure (all) removed.
 * Reports in clear (written before encryption) count as nobody's: retention of noTenant.
 */
function personalRowsOf(trx: Transaction<ReportSchema>, tenantId: string) {
  return trx
    .deleteFrom("forensic_report")
    .where((eb) =>
      tenantId === noTenant
        ? eb.or([eb("tenant_id", "=", noTenant), eb("tenant_id", "is", null)])
        : eb("tenant_id", "=", tenantId),
    );
}

async function dropPersonalRows(
  trx: Transaction<ReportSchema>,
  tenantId: string,
  retention: Pick<RetentionApplied, "failureReportsBefore"> | null,
): Promise<void> {
  let query = personalRowsOf(trx, tenantId);
  if (retention) {
    query = query.where("recorded", "<", Math.floor(Date.parse(retention.failureReportsBefore) / 1000));
  }
  await query.execute();
}

/** The key scopes /forensic rows were sealed under (tenants, domains' own scopes, `-`). */
export async function personalRowScopes(db: Kysely<ReportSchema>): Promise<string[]> {
  const rows = await db
    .selectFrom("forensic_report")
    .select("tenant_id")
    .distinct()
    .where("tenant_id", "is not", null)
    .execute();
  return rows.map((row) => row.tenant_id!);
}

/** How many /forensic rows of the tenant retention (before `before`) or erasure (null) removes. */
export async function countPersonalRows(
  db: Kysely<ReportSchema>,
  tenantId: string,
  before: Date | null,
): Promise<number> {
  let query = db
    .selectFrom("forensic_report")
    .select(sql<string>`count(*)::text`.as("n"))
    .where((eb) =>
      tenantId === noTenant
        ? eb.or([eb("tenant_id", "=", noTenant), eb("tenant_id", "is", null)])
        : eb("tenant_id", "=", tenantId),
    );
  if (before) query = query.where("recorded", "<", Math.floor(before.getTime() / 1000));
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.n);
}
