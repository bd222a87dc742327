/**
 * The TLS endpoints' records computed again from the report files themselves (the JSON as
 * RFC 8460 writes it, read here without packages/tls-reports): the documented rules of
 * docs/api.md ("SMTP TLS reports") written out a second time, for the tests to compare.
 */
import { splitOverDays } from "./independent-series.js";

const daySeconds = 86_400;

// biome-ignore lint/suspicious/noExplicitAny: the report files' JSON, read field by field
type Json = any;

/** One failed-session count of a report at the second it counts. */
interface Part {
  t: number;
  count: number;
}

/** A report's count at its start, or over its UTC days when it covers more than 24 hours. */
function parts(begin: number, end: number, count: number): Part[] {
  const row = { begin, end, count } as Parameters<typeof splitOverDays>[0];
  return splitOverDays(row).map((day) => ({
    t: Math.max(begin, Date.parse(`${day.date}T00:00:00Z`) / 1000),
    count: day.count,
  }));
}

const host = (raw: string | null | undefined) => (raw ?? "").trim().toLowerCase().replace(/\.$/, "");
/** IPv6 in its shortest form through the WHATWG URL parser; IPv4 as written. */
const address = (raw: string | null | undefined) => {
  const text = (raw ?? "").trim();
  return text.includes(":") ? new URL(`http://[${text}]/`).hostname.slice(1, -1) : text;
};
const seconds = (text: string) => Math.floor(Date.parse(text) / 1000);

interface Fact {
  domain: string;
  policyType: string;
  t: number;
  reports: number;
  successful: number;
  failed: number;
}

interface FailureFact {
  key: string[];
  t: number;
  failed: number;
}

export interface TlsFacts {
  policies: Fact[];
  failures: FailureFact[];
}

/** Every fact of the given reports (JSON texts). */
export function tlsFactsOf(reports: readonly string[]): TlsFacts {
  const facts: TlsFacts = { policies: [], failures: [] };
  for (const text of reports) {
    const report: Json = JSON.parse(text);
    const begin = seconds(report["date-range"]["start-datetime"]);
    const end = seconds(report["date-range"]["end-datetime"]);
    const named = new Set<string>(
      report.policies.map((entry: Json) => host(entry.policy["policy-domain"])).filter(Boolean),
    );
    for (const entry of report.policies) {
      let domain = host(entry.policy["policy-domain"]);
      if (domain === "" && named.size === 1) domain = [...named][0]!;
      if (domain === "") continue;
      const policyType = entry.policy["policy-type"].toLowerCase();
      facts.policies.push({ domain, policyType, t: begin, reports: 1, successful: 0, failed: 0 });
      for (const part of parts(begin, end, entry.summary["total-successful-session-count"]))
        facts.policies.push({ domain, policyType, t: part.t, reports: 0, successful: part.count, failed: 0 });
      for (const part of parts(begin, end, entry.summary["total-failure-session-count"]))
        facts.policies.push({ domain, policyType, t: part.t, reports: 0, successful: 0, failed: part.count });
      for (const detail of entry["failure-details"] ?? []) {
        const key = [
          domain,
          policyType,
          detail["result-type"].toLowerCase(),
          address(detail["sending-mta-ip"]),
          host(detail["receiving-mx-hostname"]),
          address(detail["receiving-ip"]),
          report["organization-name"],
        ];
        for (const part of parts(begin, end, detail["failed-session-count"]))
          facts.failures.push({ key, t: part.t, failed: part.count });
      }
    }
  }
  return facts;
}

const bytewise = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const compareKeys = (a: readonly string[], b: readonly string[]) => {
  for (let index = 0; index < a.length; index++) {
    const order = bytewise(a[index]!, b[index]!);
    if (order !== 0) return order;
  }
  return 0;
};

/** tls_by_domain's records for these domains and period [start, end], in the endpoint's order. */
export function expectedTlsByDomain(facts: TlsFacts, domains: readonly string[], start: number, end: number) {
  const sums = new Map<string, { key: string[]; reports: number; successful: number; failed: number }>();
  for (const fact of facts.policies) {
    if (!domains.includes(fact.domain) || fact.t < start || fact.t > end) continue;
    const key = [fact.domain, fact.policyType];
    const entry = sums.get(key.join(" ")) ?? { key, reports: 0, successful: 0, failed: 0 };
    entry.reports += fact.reports;
    entry.successful += fact.successful;
    entry.failed += fact.failed;
    sums.set(key.join(" "), entry);
  }
  return [...sums.values()]
    .sort((a, b) => b.successful + b.failed - (a.successful + a.failed) || compareKeys(a.key, b.key))
    .map((entry) => ({
      Domain: entry.key[0]!,
      PolicyType: entry.key[1]!,
      Reports: String(entry.reports),
      Sessions: String(entry.successful + entry.failed),
      Successful: String(entry.successful),
      Failed: String(entry.failed),
    }));
}

/** tls_failures' records for these domains and period, in the endpoint's order. */
export function expectedTlsFailures(facts: TlsFacts, domains: readonly string[], start: number, end: number) {
  const sums = new Map<string, { key: string[]; failed: number }>();
  for (const fact of facts.failures) {
    if (!domains.includes(fact.key[0]!) || fact.t < start || fact.t > end) continue;
    const entry = sums.get(fact.key.join("\u0000")) ?? { key: fact.key, failed: 0 };
    entry.failed += fact.failed;
    sums.set(fact.key.join("\u0000"), entry);
  }
  return [...sums.values()]
    .sort((a, b) => b.failed - a.failed || compareKeys(a.key, b.key))
    .map(({ key, failed }) => ({
      Domain: key[0]!,
      PolicyType: key[1]!,
      ResultType: key[2]!,
      SendingMtaIp: key[3]!,
      ReceivingMxHostname: key[4]!,
      ReceivingIp: key[5]!,
      Organization: key[6]!,
      FailedSessions: String(failed),
    }));
}

/** tls_by_date's daily records for these domains, every day of [start, end] present. */
export function expectedTlsByDate(facts: TlsFacts, domains: readonly string[], start: number, end: number) {
  const records = [];
  for (let day = Math.floor(start / daySeconds); day <= Math.floor(end / daySeconds); day++) {
    let reports = 0;
    let successful = 0;
    let failed = 0;
    for (const fact of facts.policies) {
      if (!domains.includes(fact.domain) || Math.floor(fact.t / daySeconds) !== day) continue;
      reports += fact.reports;
      successful += fact.successful;
      failed += fact.failed;
    }
    records.push({
      Date: new Date(day * daySeconds * 1000).toISOString().slice(0, 10),
      Reports: String(reports),
      Sessions: String(successful + failed),
      Successful: String(successful),
      Failed: String(failed),
    });
  }
  return records;
}
