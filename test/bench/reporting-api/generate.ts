import type {
  AggregateReportReceived,
  AggregateRowRecord,
  ForensicReportReceived,
} from "@dmarc-ledger/events";

/** Deterministic PRNG (mulberry32): the same seed gives the same tenant on every run. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Zipf-like sampler over ranks 0..n-1 (weight 1/(rank+1)^s): a few ranks carry most of the draws. */
export function zipf(n: number, s: number): (u: number) => number {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    sum += 1 / (i + 1) ** s;
    cumulative[i] = sum;
  }
  return (u) => {
    const target = u * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export const DAY = 86_400;
/** 2025-01-01T00:00:00Z: the year of traffic. */
export const yearStart = Date.UTC(2025, 0, 1) / 1000;
export const days = 365;
export const yearEnd = yearStart + days * DAY - 1;

const bigReporters = [
  "google.com",
  "outlook.com",
  "yahoo.com",
  "comcast.net",
  "mail.ru",
  "yandex.ru",
  "gmx.net",
  "web.de",
  "orange.fr",
  "qq.com",
  "zoho.com",
  "fastmail.com",
  "protonmail.ch",
  "t-online.de",
  "free.fr",
  "seznam.cz",
  "att.net",
  "cox.net",
  "icloud.com",
  "aol.com",
];

export interface Scale {
  rows: number;
  domains: number;
  reporters: number;
  sourceIps: number;
  groups: number;
  forensic: number;
}

/** 10M rows: 2,000 domains, 50 reporters, 200,000 source IPs; smaller runs scale domains and IPs down. */
export function scaleFor(rows: number): Scale {
  const f = Math.min(1, rows / 10_000_000);
  return {
    rows,
    domains: Math.max(40, Math.round(2000 * f)),
    reporters: 50,
    sourceIps: Math.max(2000, Math.round(200_000 * f)),
    groups: 20,
    forensic: 3000,
  };
}

export const domainName = (i: number) => `bench-${String(i).padStart(4, "0")}.com`;
export const reporterName = (i: number) => bigReporters[i] ?? `reporter${i}.example`;
export const groupName = (i: number) => `group-${String(i).padStart(2, "0")}`;

/** Scatters rank i over the address space so that heavy senders are not neighbours. */
function ipOf(rank: number): string {
  const x = (Math.imul(rank + 1, 2654435761) >>> 0) % 16_777_213;
  return `${10 + (rank % 200)}.${(x >>> 16) & 255}.${(x >>> 8) & 255}.${x & 255}`;
}

type SenderKind = "aligned" | "esp" | "forwarder" | "spoofer";

interface Sender {
  ip: string;
  kind: SenderKind;
  /** Most messages a row of this sender carries: heavy (low-rank) senders send more. */
  maxCount: number;
  esp: number;
}

/** Everything about one flat row that the COPY baseline stores (policy results and auth results). */
export interface FlatRow {
  domain: string;
  t: number;
  sourceIp: string;
  organization: string;
  disposition: string;
  policyDkim: string;
  policySpf: string;
  arc: "pass" | "fail" | null;
  dkimDomain: string;
  dkimResult: string;
  spfDomain: string;
  spfResult: string;
  count: number;
}

export interface GeneratedReport {
  payload: AggregateReportReceived;
}

/**
 * The tenant's traffic: reports of one reporter about one domain for one UTC day, 1..2,000 rows
 * each (skewed towards small ones), with domains, reporters and source IPs drawn Zipf-like.
 */
export class TrafficGenerator {
  private readonly random: () => number;
  private readonly pickDomain: (u: number) => number;
  private readonly pickReporter: (u: number) => number;
  private readonly pickIp: (u: number) => number;
  private readonly senders: Sender[] = [];
  private readonly policies: string[] = [];
  private produced = 0;
  private reportIndex = 0;

  /** `seed` and `prefix` make a second stream of reports, distinct from the first (their identities too). */
  constructor(
    private readonly scale: Scale,
    private readonly options: { seed?: number; prefix?: string } = {},
  ) {
    this.random = prng(options.seed ?? 20250101);
    this.pickDomain = zipf(scale.domains, 1.1);
    this.pickReporter = zipf(scale.reporters, 1.3);
    this.pickIp = zipf(scale.sourceIps, 1.0);
    const traits = prng(42);
    for (let rank = 0; rank < scale.sourceIps; rank++) {
      const u = traits();
      const kind: SenderKind = u < 0.55 ? "aligned" : u < 0.75 ? "esp" : u < 0.85 ? "forwarder" : "spoofer";
      this.senders.push({
        ip: ipOf(rank),
        kind,
        maxCount: Math.max(1, Math.round(5000 / Math.sqrt(rank + 1))),
        esp: Math.floor(traits() * 30),
      });
    }
    for (let i = 0; i < scale.domains; i++) this.policies.push(["reject", "quarantine", "none"][i % 3]!);
  }

  get rowsProduced(): number {
    return this.produced;
  }

  /**
   * The next report, or null once the scale's rows are produced. Rows are also handed to `onRow`.
   * `shape` fixes its day (0 to 364) and its number of rows instead of drawing them.
   */
  next(onRow: (row: FlatRow) => void, shape: { day?: number; rows?: number } = {}): GeneratedReport | null {
    if (this.produced >= this.scale.rows) return null;
    const r = this.random;
    const domainIndex = this.pickDomain(r());
    const domain = domainName(domainIndex);
    const organization = reporterName(this.pickReporter(r()));
    const drawnDay = Math.floor(r() * days);
    const day = shape.day ?? drawnDay;
    const begin = yearStart + day * DAY;
    const wanted = shape.rows ?? 1 + Math.floor(1999 * r() ** 4);
    const n = Math.min(wanted, this.scale.rows - this.produced);
    const policy = this.policies[domainIndex]!;
    const rows: AggregateRowRecord[] = [];
    for (let i = 0; i < n; i++) {
      const sender = this.senders[this.pickIp(r())]!;
      const flat = this.row(sender, domain, policy, r);
      onRow({ ...flat, t: begin, organization });
      rows.push({
        sourceIp: flat.sourceIp,
        count: flat.count,
        disposition: flat.disposition,
        policyDkim: flat.policyDkim,
        policySpf: flat.policySpf,
        reasons: [],
        arc: flat.arc,
        headerFrom: domain,
        envelopeFrom: flat.spfDomain,
        envelopeTo: null,
        dkim: [{ domain: flat.dkimDomain, selector: "s1", result: flat.dkimResult, humanResult: null }],
        spf: [{ domain: flat.spfDomain, scope: "mfrom", result: flat.spfResult }],
      });
    }
    this.produced += n;
    const index = this.reportIndex++;
    const identity = `${this.options.prefix ?? "bench"}-${organization}-${index}`;
    return {
      payload: {
        identity,
        schema: "1.0",
        orgName: organization,
        organization,
        email: `noreply-dmarc@${organization}`,
        reportId: `r${index}`,
        begin,
        end: begin + DAY,
        policy: {
          domain,
          adkim: "r",
          aspf: "r",
          p: policy,
          sp: null,
          np: null,
          pct: 100,
          fo: null,
          testing: null,
          discoveryMethod: null,
        },
        rows,
        chunk: { index: 0, last: true },
        source: "import:bench",
        warnings: [],
      },
    };
  }

  private row(
    sender: Sender,
    domain: string,
    policy: string,
    r: () => number,
  ): Omit<FlatRow, "t" | "organization"> {
    const count = 1 + Math.floor(r() * sender.maxCount);
    const glitch = r() < 0.03;
    let policyDkim = "fail";
    let policySpf = "fail";
    let dkimDomain = domain;
    let dkimResult = "fail";
    let spfDomain = domain;
    let spfResult = "fail";
    let arc: FlatRow["arc"] = null;
    switch (sender.kind) {
      case "aligned":
        policyDkim = glitch ? "fail" : "pass";
        dkimResult = policyDkim;
        policySpf = "pass";
        spfResult = "pass";
        break;
      case "esp":
        policyDkim = glitch ? "fail" : "pass";
        dkimResult = policyDkim;
        spfDomain = `bounces.esp${sender.esp}.example`;
        spfResult = "pass";
        break;
      case "forwarder":
        dkimResult = glitch ? "pass" : "fail";
        policyDkim = dkimResult;
        spfDomain = `fwd${sender.esp}.example`;
        spfResult = "pass";
        arc = r() < 0.6 ? "pass" : "fail";
        break;
      case "spoofer":
        dkimDomain = `spoof${sender.esp}.example`;
        spfDomain = dkimDomain;
        spfResult = r() < 0.5 ? "softfail" : "fail";
        break;
    }
    const pass = policyDkim === "pass" || policySpf === "pass";
    const disposition = pass ? "none" : arc === "pass" && r() < 0.5 ? "none" : policy;
    return {
      domain,
      sourceIp: sender.ip,
      disposition,
      policyDkim,
      policySpf,
      arc,
      dkimDomain,
      dkimResult,
      spfDomain,
      spfResult,
      count,
    };
  }

  /** Failure reports spread over the year, each at its own second (so their order is total). */
  forensic(index: number): ForensicReportReceived {
    const r = this.random;
    const domain = domainName(this.pickDomain(r()));
    const step = Math.floor((days * DAY) / this.scale.forensic);
    const received = yearStart + index * step + Math.floor(r() * (step - 1));
    return {
      identity: `bench-forensic-${index}`,
      feedbackType: "auth-failure",
      reportedDomain: domain,
      arrivalDate: new Date(received * 1000).toISOString(),
      authFailure: "dmarc",
      deliveryResult: "reject",
      incidents: 1 + Math.floor(r() * 3),
      personal: {
        clear: {
          subject: `Bench failure ${String(index).padStart(6, "0")} for ${domain}`,
          sourceIp: this.senders[this.pickIp(r())]!.ip,
          headers: `From: <someone@${domain}>\nTo: <victim@example.net>\nSubject: Bench failure ${index}\nMessage-ID: <${index}@bench>\n${"X-Filler: lorem ipsum dolor sit amet\n".repeat(8)}`,
          originalMailFrom: `bounce@spoof${index % 30}.example`,
          originalRcptTo: "victim@example.net",
        },
      },
      source: "import:bench",
      warnings: [],
    };
  }
}
