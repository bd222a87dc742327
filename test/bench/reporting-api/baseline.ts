import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ForensicReportReceived } from "@dmarc-ledger/events";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import type { FlatRow } from "./generate.js";

/**
 * The baseline: the same rows, flat, in a plain table (no read model), and every list answer
 * computed from it with a plain GROUP BY at request time.
 */
export const flatColumns =
  "domain, t, source_ip, organization, disposition, policy_dkim, policy_spf, arc, dkim_domain, dkim_result, spf_domain, spf_result, count";

export async function createFlatTables(client: pg.ClientBase): Promise<void> {
  await client.query(`create table bench_flat (
    domain text not null, t bigint not null, source_ip text not null, organization text not null,
    disposition text not null, policy_dkim text not null, policy_spf text not null, arc text,
    dkim_domain text not null, dkim_result text not null, spf_domain text not null,
    spf_result text not null, count bigint not null)`);
  await client.query(`create table bench_flat_forensic (
    identity text not null, domain text not null, received bigint not null, subject text not null,
    amount bigint not null, headers text not null)`);
}

/** Collects rows as COPY text lines in Buffers (outside the JS heap), ready to stream. */
export class CopyBuffer {
  readonly chunks: Buffer[] = [];
  private lines: string[] = [];
  bytes = 0;

  add(row: FlatRow): void {
    this.lines.push(
      `${row.domain}\t${row.t}\t${row.sourceIp}\t${row.organization}\t${row.disposition}\t${row.policyDkim}\t${row.policySpf}\t${row.arc ?? "\\N"}\t${row.dkimDomain}\t${row.dkimResult}\t${row.spfDomain}\t${row.spfResult}\t${row.count}\n`,
    );
    if (this.lines.length >= 10_000) this.flush();
  }

  flush(): void {
    if (this.lines.length === 0) return;
    const chunk = Buffer.from(this.lines.join(""));
    this.bytes += chunk.length;
    this.chunks.push(chunk);
    this.lines = [];
  }
}

export async function copyInto(client: pg.ClientBase, table: string, columns: string, chunks: Buffer[]) {
  const stream = client.query(copyFrom(`copy ${table} (${columns}) from stdin`));
  await pipeline(Readable.from(chunks), stream);
}

export function forensicCopyChunk(
  reports: ForensicReportReceived[],
  receivedOf: (r: ForensicReportReceived) => number,
) {
  const escaped = (text: string) => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\t/g, "\\t");
  return Buffer.from(
    reports
      .map((r) => {
        // The generator writes them in clear (generate.ts).
        const fields = "clear" in r.personal ? r.personal.clear : { subject: "", headers: "" };
        return `${r.identity}\t${r.reportedDomain.toLowerCase()}\t${receivedOf(r)}\t${escaped(fields.subject)}\t${r.incidents}\t${escaped(fields.headers)}\n`;
      })
      .join(""),
  );
}

export interface ComparableRecord {
  key: string;
  volume: string;
}

export interface ComparablePage {
  total: number;
  records: ComparableRecord[];
}

export interface PageArgs {
  tenantId: string;
  start: number;
  end: number;
  page: number;
  perPage: number;
}

const counters = (alias: string) => {
  const c = (name: string) => `${alias}.${name}`;
  const dp = `(${c("policy_dkim")} = 'pass' or ${c("policy_spf")} = 'pass')`;
  return `sum(${c("count")}) as volume,
    coalesce(sum(${c("count")}) filter (where ${dp}), 0) as dmarc,
    coalesce(sum(${c("count")}) filter (where not ${dp} and ${c("arc")} = 'pass'), 0) as dmarc_unaligned_arc_pass,
    coalesce(sum(${c("count")}) filter (where ${c("policy_dkim")} = 'pass'), 0) as dkim_aligned,
    coalesce(sum(${c("count")}) filter (where ${c("dkim_result")} = 'pass'), 0) as dkim,
    coalesce(sum(${c("count")}) filter (where ${c("policy_spf")} = 'pass'), 0) as spf_aligned,
    coalesce(sum(${c("count")}) filter (where ${c("spf_result")} = 'pass'), 0) as spf`;
};

const inPeriod = `f.t >= $2 and f.t <= $3 and f.domain in (select domain from domain where tenant_id = $1)`;
const paging = `limit $4 offset $5`;

function keyed(groupBy: string, from = "bench_flat f", where = inPeriod) {
  return `select ${groupBy} as key, ${counters("f")}, count(*) over () as total
    from ${from} where ${where}
    group by ${groupBy}
    order by volume desc, key asc ${paging}`;
}

/** Per (domain, source IP, organisation), with the most-frequent picks for the page's groups, like the API. */
function bySource(unalignedOnly: boolean) {
  const where = `${inPeriod}${unalignedOnly ? ` and not (f.policy_dkim = 'pass' or f.policy_spf = 'pass')` : ""}`;
  const pick = (column: string, skipEmpty: boolean, tie = "value") => `
    select distinct on (domain, source_ip, organization) domain, source_ip, organization, value, n from (
      select p.domain, p.source_ip, p.organization, p.${column} as value, sum(p.count) as n
      from page_rows p ${skipEmpty ? `where p.${column} is not null and p.${column} <> ''` : ""}
      group by 1, 2, 3, 4
    ) ranked order by domain, source_ip, organization, n desc, ${tie}`;
  return `with page as (
      select f.domain, f.source_ip, f.organization, ${counters("f")}, max(f.t) as last_t,
        count(*) over () as total
      from bench_flat f where ${where}
      group by f.domain, f.source_ip, f.organization
      order by volume desc, f.domain, f.source_ip, f.organization ${paging}
    ),
    page_rows as (
      select f.* from bench_flat f join page using (domain, source_ip, organization) where ${where}
    ),
    dispositions as (${pick("disposition", false, "case value when 'reject' then 0 when 'quarantine' then 1 when 'none' then 2 else 3 end, value")}),
    arcs as (${pick("arc", true)}),
    spf_domains as (${pick("spf_domain", true)}),
    dkim_domains as (${pick("dkim_domain", true)})
    select page.domain || '|' || page.source_ip || '|' || page.organization as key, page.volume, page.total,
      d.value as disposition, a.value as arc, s.value as spf_domain, k.value as dkim_domain
    from page
    join dispositions d using (domain, source_ip, organization)
    left join arcs a using (domain, source_ip, organization)
    left join spf_domains s using (domain, source_ip, organization)
    left join dkim_domains k using (domain, source_ip, organization)
    order by page.volume desc, page.domain, page.source_ip, page.organization`;
}

/**
 * A failure report by its domain and arrival: over HTTP the API shows the subject `(removed)`
 * (redaction, a tenant's default), so the subject names no report there.
 */
const forensic = `select f.domain || '|' || to_char(to_timestamp(f.received) at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') as key,
    amount as volume, count(*) over () as total
  from bench_flat_forensic f
  where f.received >= $2 and f.received <= $3 and f.domain in (select domain from domain where tenant_id = $1)
  order by f.received desc ${paging}`;

/** The baseline SQL of each endpoint; parameters $1 tenant, $2 start, $3 end, $4 limit, $5 offset. */
export const baselineSql: Record<string, string> = {
  aggregate_by_domain: keyed("f.domain"),
  aggregate_by_domain_group: keyed(
    "d.group_name",
    "bench_flat f join domain d on d.domain = f.domain and d.tenant_id = $1",
    `f.t >= $2 and f.t <= $3 and d.group_name is not null`,
  ),
  aggregate_by_unaligned_source: bySource(true),
  aggregate_by_source: bySource(false),
  aggregate_by_organization: keyed("f.organization"),
  forensic,
};

export async function runBaseline(
  client: pg.ClientBase,
  endpoint: string,
  args: PageArgs,
): Promise<ComparablePage> {
  const text = baselineSql[endpoint];
  if (!text) throw new Error(`no baseline for ${endpoint}`);
  const { rows } = await client.query<{ key: string; volume: string; total: string }>(text, [
    args.tenantId,
    args.start,
    args.end,
    args.perPage,
    (args.page - 1) * args.perPage,
  ]);
  return {
    total: rows.length > 0 ? Number(rows[0]!.total) : 0,
    records: rows.map((row) => ({ key: row.key, volume: String(row.volume) })),
  };
}
