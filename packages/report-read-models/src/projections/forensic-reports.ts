import type { Projection } from "@dmarc-ledger/projection-engine";
import { sql } from "kysely";
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
  handles: new Set(["ForensicReportReceived"]),
  async apply(trx, events) {
    const { last } = await trx
      .selectFrom("forensic_report")
      .select(sql<string>`coalesce(max(forensic_id), 0)::text`.as("last"))
      .executeTakeFirstOrThrow();
    let next = BigInt(last);
    for (const event of events) {
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
        })
        .onConflict((oc) => oc.column("identity").doNothing())
        .execute();
    }
  },
};
