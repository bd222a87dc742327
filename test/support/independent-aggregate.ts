import { readFileSync } from "node:fs";
import { getDomain } from "tldts";

/**
 * A second, deliberately simple reading of well-formed aggregate XML (regular expressions, no
 * XML library, no code shared with packages/dmarc-reports), and the contract's counter rules
 * written out again, so that API tests check our numbers against an independent computation.
 */
export interface SimpleRow {
  domain: string;
  organization: string;
  begin: number;
  /** The report's date_range end (the daily series splits reports longer than a day by it). */
  end: number;
  sourceIp: string;
  count: number;
  disposition: string;
  policyDkim: string;
  policySpf: string;
  dkim: { domain: string; result: string }[];
  spf: { domain: string; result: string }[];
  arc: "pass" | "fail" | null;
}

const first = (text: string, tag: string) =>
  new RegExp(`<${tag}>([^<]*)</${tag}>`).exec(text)?.[1]?.trim() ?? "";
const all = (text: string, tag: string) =>
  [...text.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))].map((match) => match[1]!);

function organizationOf(orgName: string, email: string): string {
  const name = orgName.trim();
  if (name === "") return (getDomain(email.split("@").pop() ?? "") ?? "").toLowerCase();
  return (name.includes(" ") ? name : (getDomain(name) ?? name)).toLowerCase();
}

export function readSimpleRows(path: string): SimpleRow[] {
  const text = readFileSync(path, "utf8");
  const metadata = all(text, "report_metadata")[0] ?? "";
  const policy = all(text, "policy_published")[0] ?? "";
  const domain = first(policy, "domain").toLowerCase();
  const organization = organizationOf(first(metadata, "org_name"), first(metadata, "email"));
  const begin = Number(first(metadata, "begin"));
  const end = Number(first(metadata, "end"));
  return all(text, "record").map((record) => {
    const evaluated = all(record, "policy_evaluated")[0] ?? "";
    const auth = all(record, "auth_results")[0] ?? "";
    const reasons = all(evaluated, "reason").join(" ").toLowerCase();
    return {
      domain,
      organization,
      begin,
      end,
      sourceIp: first(record, "source_ip"),
      count: Number(first(record, "count")),
      disposition: first(evaluated, "disposition").toLowerCase(),
      policyDkim: first(evaluated, "dkim").toLowerCase(),
      policySpf: first(evaluated, "spf").toLowerCase(),
      dkim: all(auth, "dkim").map((part) => ({
        domain: first(part, "domain").toLowerCase(),
        result: first(part, "result").toLowerCase(),
      })),
      spf: all(auth, "spf").map((part) => ({
        domain: first(part, "domain").toLowerCase(),
        result: first(part, "result").toLowerCase(),
      })),
      arc: reasons.includes("arc=pass") ? "pass" : reasons.includes("arc=fail") ? "fail" : null,
    };
  });
}

export interface Counters {
  Volume: string;
  DMARC: string;
  DMARCUnaligned: string;
  DMARCUnalignedARCPass: string | null;
  DKIMAligned: string;
  DKIM: string;
  DKIMFailed: string;
  SPFAligned: string;
  SPF: string;
  SPFFailed: string;
}

/** The contract's counters over a group of rows, as the API must print them. */
export function countersOf(rows: SimpleRow[], arcPassIsNull = false): Counters {
  let volume = 0;
  let dmarc = 0;
  let arcPass = 0;
  let dkimAligned = 0;
  let spfAligned = 0;
  let dkim = 0;
  let spf = 0;
  for (const row of rows) {
    const dkimOk = row.policyDkim === "pass";
    const spfOk = row.policySpf === "pass";
    volume += row.count;
    if (dkimOk || spfOk) dmarc += row.count;
    else if (row.arc === "pass") arcPass += row.count;
    if (dkimOk) dkimAligned += row.count;
    if (spfOk) spfAligned += row.count;
    if (row.dkim.some((result) => result.result === "pass")) dkim += row.count;
    if (row.spf.some((result) => result.result === "pass")) spf += row.count;
  }
  return {
    Volume: String(volume),
    DMARC: String(dmarc),
    DMARCUnaligned: String(volume - dmarc),
    DMARCUnalignedARCPass: arcPassIsNull ? null : String(arcPass),
    DKIMAligned: String(dkimAligned),
    DKIM: String(dkim),
    DKIMFailed: String(volume - dkim),
    SPFAligned: String(spfAligned),
    SPF: String(spf),
    SPFFailed: String(volume - spf),
  };
}

export const dmarcPass = (row: SimpleRow) => row.policyDkim === "pass" || row.policySpf === "pass";

/** Groups rows by a key, keeping insertion order. */
export function groupBy<T>(rows: T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const id = key(row);
    const group = groups.get(id);
    if (group) group.push(row);
    else groups.set(id, [row]);
  }
  return groups;
}

/** The value with the most messages; ties go by `tieRank` (lower first), then by name. */
export function mostMessages(
  rows: SimpleRow[],
  value: (row: SimpleRow) => string,
  tieRank: (value: string) => number = () => 0,
): { value: string; count: number } | null {
  const sums = new Map<string, number>();
  for (const row of rows) {
    const v = value(row);
    if (v !== "") sums.set(v, (sums.get(v) ?? 0) + row.count);
  }
  const ranked = [...sums].sort(
    ([a, n], [b, m]) => m - n || tieRank(a) - tieRank(b) || (a < b ? -1 : a > b ? 1 : 0),
  );
  return ranked[0] ? { value: ranked[0][0], count: ranked[0][1] } : null;
}

/** Orders like the API: Volume descending, then the key fields ascending. */
export function byVolumeThenKey<T extends { Volume: string }>(key: (record: T) => string[]) {
  return (a: T, b: T) => {
    const volume = Number(b.Volume) - Number(a.Volume);
    if (volume !== 0) return volume;
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < ka.length; i++) {
      if (ka[i]! < kb[i]!) return -1;
      if (ka[i]! > kb[i]!) return 1;
    }
    return 0;
  };
}
