import { SeededRandom } from "./seeded-random.js";

/**
 * The demo's reports: DMARC aggregate reports (and a few failure reports) for three domains, as
 * real receivers send them, from senders at public addresses of the real services' networks (the
 * shipped AS database and service map name them). Pure: the same options give the same bytes.
 * Each report depends only on the seed, its reporter, domain and day, and the period's shape
 * (policy move, spoofing run): a day reported twice has the same report id, counted once.
 */
export interface DemoOptions {
  seed: string;
  days: number;
  /** The last day reported, `YYYY-MM-DD` (UTC). */
  lastDay: string;
}

export interface DemoReport {
  /** A file name as a receiver's attachment would have it. */
  name: string;
  kind: "aggregate" | "failure";
  text: string;
}

export const demoDomains = ["example.com", "example.net", "example.org"] as const;
type DemoDomain = (typeof demoDomains)[number];

/** The domain whose policy moves from none to quarantine halfway through the period. */
export const policyMoveDomain: DemoDomain = "example.com";

interface Reporter {
  orgName: string;
  email: string;
  extraContact?: string;
  /** The share of each domain's mail that goes to this receiver's users. */
  share: number;
  reportId(random: SeededRandom): string;
}

const reporters: Reporter[] = [
  {
    orgName: "google.com",
    email: "noreply-dmarc-support@google.com",
    extraContact: "https://support.google.com/a/answer/2466580",
    share: 0.46,
    reportId: (random) => random.digits(19),
  },
  {
    orgName: "Outlook.com",
    email: "dmarcreport@microsoft.com",
    share: 0.3,
    reportId: (random) => random.hex(32),
  },
  {
    orgName: "Yahoo",
    email: "dmarchelp@yahooinc.com",
    share: 0.16,
    reportId: (random) => random.digits(19),
  },
  {
    orgName: "Mimecast",
    email: "dmarc-reports@mimecast.org",
    share: 0.08,
    reportId: (random) => random.hex(24),
  },
];

interface AuthResult {
  domain: string;
  result: "pass" | "fail" | "softfail" | "none";
  selector?: string;
}

/** One kind of mail: where it comes from, what authenticates it, how much a day per domain. */
interface Sender {
  ips: readonly string[];
  spf(domain: string): AuthResult;
  dkim(domain: string): AuthResult[];
  /** Messages a day for each domain it sends for (before the weekday and reporter shares). */
  daily: Partial<Record<DemoDomain, number>>;
  /** Only on these weekdays (0 Sunday), a newsletter's send day. */
  weekdays?: readonly number[];
  /** The reason the receiver gives for its disposition (ARC on a forwarded message). */
  reason?: { type: string; comment: string };
}

// Every address is in the named service's network by the shipped AS database (AS15169 Google,
// AS8075 Microsoft, AS14618/AS16509 Amazon, AS11377 SendGrid, AS14782 Mailchimp).
const senders: Record<string, Sender> = {
  googleWorkspace: {
    ips: [
      "209.85.220.41",
      "209.85.220.69",
      "209.85.128.50",
      "209.85.208.172",
      "2a00:1450:4864:20::52e",
      "2a00:1450:4864:20::536",
    ],
    spf: (domain) => ({ domain, result: "pass" }),
    dkim: (domain) => [{ domain, result: "pass", selector: "google" }],
    daily: { "example.com": 140, "example.org": 45 },
  },
  microsoft365: {
    ips: ["40.92.18.20", "40.92.66.101", "52.100.165.230", "52.100.7.44"],
    spf: (domain) => ({ domain, result: "pass" }),
    dkim: (domain) => [{ domain, result: "pass", selector: "selector1" }],
    daily: { "example.net": 210 },
  },
  amazonSes: {
    ips: ["54.240.8.21", "54.240.8.66", "54.240.11.5", "54.240.27.10"],
    spf: () => ({ domain: "amazonses.com", result: "pass" }),
    dkim: (domain) => [
      { domain, result: "pass", selector: "hk3mzs4rnh6cyy2gyn5ozpmiwd3uxlwy" },
      { domain: "amazonses.com", result: "pass", selector: "6gbrjpgwjskckoa6a5zn6fwqkn67xbtw" },
    ],
    daily: { "example.com": 380 },
  },
  sendgrid: {
    ips: ["167.89.100.12", "167.89.123.45", "149.72.34.56", "149.72.120.9"],
    spf: () => ({ domain: "sendgrid.net", result: "pass" }),
    dkim: (domain) => [
      { domain, result: "pass", selector: "s1" },
      { domain: "sendgrid.net", result: "pass", selector: "smtpapi" },
    ],
    daily: { "example.com": 70, "example.net": 35 },
  },
  mailchimp: {
    ips: ["198.2.180.10", "198.2.132.55", "205.201.131.40", "205.201.139.12"],
    spf: () => ({ domain: "mail180.sea91.mcsv.net", result: "pass" }),
    dkim: (domain) => [
      { domain, result: "pass", selector: "k1" },
      { domain: "mcdlv.net", result: "pass", selector: "k2" },
    ],
    daily: { "example.com": 2600, "example.org": 700 },
    weekdays: [2],
  },
  // A help desk on SendGrid that does not sign as example.org yet: legitimate mail failing DMARC,
  // what a stricter policy would put at risk.
  helpDesk: {
    ips: ["167.89.115.54", "149.72.154.232"],
    spf: () => ({ domain: "sendgrid.net", result: "pass" }),
    dkim: () => [{ domain: "sendgrid.net", result: "pass", selector: "smtpapi" }],
    daily: { "example.org": 30 },
  },
  // Debian's list server relays the domain's messages: the envelope is the author's (SPF fails
  // at the list's address), the signature survives; the receiver saw ARC pass.
  mailingList: {
    ips: ["82.195.75.100"],
    spf: (domain) => ({ domain, result: "fail" }),
    dkim: (domain) => [{ domain, result: "pass", selector: "google" }],
    daily: { "example.com": 12, "example.org": 6 },
    reason: { type: "local_policy", comment: "arc=pass" },
  },
};

// Networks that send spoofed mail (hosting and access networks of several countries).
const spoofIps = [
  "185.220.101.4",
  "45.141.84.7",
  "103.75.190.11",
  "5.188.206.14",
  "91.92.109.21",
  "194.165.16.72",
  "193.32.162.13",
  "80.94.95.100",
  "141.98.11.20",
  "196.196.51.4",
  "201.148.104.10",
  "117.50.2.3",
  "36.255.98.4",
];

const dayMs = 86_400_000;

/** The first day of the period, as UTC midnight in ms. */
function firstDayMs(options: DemoOptions): number {
  return Date.parse(`${options.lastDay}T00:00:00Z`) - (options.days - 1) * dayMs;
}

/** The day from which `policyMoveDomain` publishes p=quarantine: the middle of the period. */
export function policyMoveDay(options: DemoOptions): string {
  return isoDay(firstDayMs(options) + Math.floor(options.days / 2) * dayMs);
}

/** The spoofing run: about a tenth of the period, from 60 % in (after the policy move). */
function spoofRun(options: DemoOptions): { from: number; to: number } {
  const from = firstDayMs(options) + Math.floor(options.days * 0.6) * dayMs;
  return { from, to: from + Math.max(2, Math.round(options.days / 10)) * dayMs };
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Row {
  ip: string;
  count: number;
  disposition: string;
  dkimAligned: boolean;
  spfAligned: boolean;
  reason?: { type: string; comment: string };
  envelopeFrom: string;
  spf: AuthResult;
  dkim: AuthResult[];
}

function policyOf(domain: DemoDomain, dayMs: number, options: DemoOptions): "none" | "quarantine" | "reject" {
  if (domain === "example.net") return "reject";
  if (domain === policyMoveDomain && dayMs >= Date.parse(`${policyMoveDay(options)}T00:00:00Z`))
    return "quarantine";
  return "none";
}

/** Relaxed alignment: the same registrable domain (the demo's domains have no subdomains). */
const aligned = (result: AuthResult, domain: string) => result.result === "pass" && result.domain === domain;

function rowsOf(
  random: SeededRandom,
  domain: DemoDomain,
  reporter: Reporter,
  day: number,
  policy: string,
  options: DemoOptions,
): Row[] {
  const weekday = new Date(day).getUTCDay();
  const weekend = weekday === 0 || weekday === 6 ? 0.35 : 1;
  const rows: Row[] = [];
  for (const sender of Object.values(senders)) {
    const daily = sender.daily[domain];
    if (!daily) continue;
    if (sender.weekdays && !sender.weekdays.includes(weekday)) continue;
    const volume = Math.round(
      daily * reporter.share * (sender.weekdays ? 1 : weekend) * (0.8 + random.next() * 0.4),
    );
    const ips = sender.ips.filter(() => random.next() < 0.6);
    if (ips.length === 0) ips.push(random.pick(sender.ips));
    let left = volume;
    ips.forEach((ip, index) => {
      const count = index === ips.length - 1 ? left : Math.floor(left * (0.3 + random.next() * 0.4));
      left -= count;
      if (count <= 0) return;
      const spf = sender.spf(domain);
      const dkim = sender.dkim(domain);
      const dkimAligned = dkim.some((result) => aligned(result, domain));
      const spfAligned = aligned(spf, domain);
      const pass = dkimAligned || spfAligned;
      rows.push({
        ip,
        count,
        disposition: pass ? "none" : policy,
        dkimAligned,
        spfAligned,
        ...(sender.reason ? { reason: sender.reason } : {}),
        envelopeFrom: spf.domain,
        spf,
        dkim,
      });
    });
  }
  // Now and then a message forwarded through the list loses its signature too (a footer added):
  // DMARC fails, the receiver overrides on ARC pass.
  if (senders.mailingList!.daily[domain] && random.next() < 0.3) {
    rows.push({
      ip: senders.mailingList!.ips[0]!,
      count: random.int(1, 3),
      disposition: "none",
      dkimAligned: false,
      spfAligned: false,
      reason: { type: "forwarded", comment: "arc=pass" },
      envelopeFrom: domain,
      spf: { domain, result: "fail" },
      dkim: [{ domain, result: "fail", selector: "google" }],
    });
  }
  // Spoofing: a trickle on any day, a run from many networks for a while.
  const run = spoofRun(options);
  const inRun = domain === policyMoveDomain && day >= run.from && day < run.to;
  const spoofers = inRun ? random.int(6, spoofIps.length) : random.next() < 0.15 ? 1 : 0;
  const spoofing = shuffled(random, spoofIps).slice(0, spoofers);
  for (const ip of spoofing) {
    const count = inRun ? random.int(20, 160) : random.int(1, 6);
    rows.push({
      ip,
      count: Math.max(1, Math.round(count * reporter.share * 2)),
      disposition: policy,
      dkimAligned: false,
      spfAligned: false,
      envelopeFrom: domain,
      spf: { domain, result: random.next() < 0.5 ? "fail" : "softfail" },
      dkim: [],
    });
  }
  return rows;
}

function shuffled<T>(random: SeededRandom, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = random.int(0, i);
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

function aggregateXml(
  reporter: Reporter,
  reportId: string,
  domain: string,
  policy: string,
  begin: number,
  rows: readonly Row[],
): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8" ?>',
    "<feedback>",
    "  <version>1.0</version>",
    "  <report_metadata>",
    `    <org_name>${escapeXml(reporter.orgName)}</org_name>`,
    `    <email>${escapeXml(reporter.email)}</email>`,
    ...(reporter.extraContact
      ? [`    <extra_contact_info>${escapeXml(reporter.extraContact)}</extra_contact_info>`]
      : []),
    `    <report_id>${reportId}</report_id>`,
    "    <date_range>",
    `      <begin>${begin / 1000}</begin>`,
    `      <end>${begin / 1000 + 86_399}</end>`,
    "    </date_range>",
    "  </report_metadata>",
    "  <policy_published>",
    `    <domain>${domain}</domain>`,
    "    <adkim>r</adkim>",
    "    <aspf>r</aspf>",
    `    <p>${policy}</p>`,
    `    <sp>${policy}</sp>`,
    "    <pct>100</pct>",
    "    <np>none</np>",
    "  </policy_published>",
  ];
  for (const row of rows) {
    lines.push(
      "  <record>",
      "    <row>",
      `      <source_ip>${row.ip}</source_ip>`,
      `      <count>${row.count}</count>`,
      "      <policy_evaluated>",
      `        <disposition>${row.disposition}</disposition>`,
      `        <dkim>${row.dkimAligned ? "pass" : "fail"}</dkim>`,
      `        <spf>${row.spfAligned ? "pass" : "fail"}</spf>`,
      ...(row.reason
        ? [
            "        <reason>",
            `          <type>${row.reason.type}</type>`,
            `          <comment>${escapeXml(row.reason.comment)}</comment>`,
            "        </reason>",
          ]
        : []),
      "      </policy_evaluated>",
      "    </row>",
      "    <identifiers>",
      `      <envelope_from>${row.envelopeFrom}</envelope_from>`,
      `      <header_from>${domain}</header_from>`,
      "    </identifiers>",
      "    <auth_results>",
    );
    for (const dkim of row.dkim) {
      lines.push(
        "      <dkim>",
        `        <domain>${dkim.domain}</domain>`,
        ...(dkim.selector ? [`        <selector>${dkim.selector}</selector>`] : []),
        `        <result>${dkim.result}</result>`,
        "      </dkim>",
      );
    }
    lines.push(
      "      <spf>",
      `        <domain>${row.spf.domain}</domain>`,
      "        <scope>mfrom</scope>",
      `        <result>${row.spf.result}</result>`,
      "      </spf>",
      "    </auth_results>",
      "  </record>",
    );
  }
  lines.push("</feedback>", "");
  return lines.join("\n");
}

const mailDate = (ms: number) => new Date(ms).toUTCString().replace("GMT", "+0000");

/** An RFC 6591 failure report as LinkedIn's receivers send them, for a spoofed message. */
function failureReport(random: SeededRandom, domain: string, ip: string, at: number): string {
  const boundary = `_----${random.hex(22)}===_`;
  const messageId = `<${random.hex(32)}@${random.hex(8)}.local>`;
  const date = mailDate(at);
  return [
    `Date: ${date}`,
    `Message-ID: <${random.hex(16)}@mail516.prod.linkedin.com>`,
    `Subject: DMARC Failure report for ${domain} Mail-From: IP:${ip}`,
    `To: dmarc-ruf@${domain}`,
    "From: dmarc-noreply@linkedin.com",
    "MIME-Version: 1.0",
    `Content-Type: multipart/report; report-type=feedback-report; boundary="${boundary}"`,
    "",
    `--${boundary}`,
    'Content-Type: text/plain; charset="US-ASCII"',
    "Content-Transfer-Encoding: 7bit",
    "",
    `This is an email abuse report for an email message received from IP ${ip} on ${date}.`,
    "The message below did not meet the sending domain's dmarc policy.",
    "",
    `--${boundary}`,
    "Content-Type: message/feedback-report",
    "",
    "Feedback-Type: auth-failure",
    "User-Agent: Lua/1.0",
    "Version: 1.0",
    `Original-Mail-From: <billing@${domain}>`,
    "Original-Rcpt-To: recipient@linkedin.com",
    `Arrival-Date: ${date}`,
    `Message-ID: ${messageId}`,
    `Authentication-Results: dmarc=fail (p=quarantine; dis=quarantine) header.from=${domain}`,
    `Source-IP: ${ip}`,
    "Delivery-Result: spam",
    "Auth-Failure: dmarc",
    `Reported-Domain: ${domain}`,
    "",
    `--${boundary}`,
    "Content-Type: text/rfc822-headers",
    "",
    `Authentication-Results: mail516.prod.linkedin.com; spf=fail smtp.mailfrom=${domain}; dkim=none; dmarc=fail header.from=${domain}`,
    `Received: from [${ip}] by mail516.prod.linkedin.com; ${date}`,
    `From: Accounts <billing@${domain}>`,
    "To: recipient@linkedin.com",
    "Subject: Your invoice is overdue",
    `Date: ${date}`,
    `Message-ID: ${messageId}`,
    "",
    `--${boundary}--`,
    "",
  ].join("\r\n");
}

/** Every report of the period, day by day, reporters in a fixed order. */
export function demoReports(options: DemoOptions): DemoReport[] {
  const reports: DemoReport[] = [];
  const first = firstDayMs(options);
  const run = spoofRun(options);
  for (let index = 0; index < options.days; index++) {
    const day = first + index * dayMs;
    const date = isoDay(day);
    for (const domain of demoDomains) {
      const policy = policyOf(domain, day, options);
      for (const reporter of reporters) {
        const random = new SeededRandom(`${options.seed}|${reporter.orgName}|${domain}|${date}`);
        const reportId = reporter.reportId(random);
        const rows = rowsOf(random, domain, reporter, day, policy, options);
        if (rows.length === 0) continue;
        const receiver = reporter.email.split("@")[1]!;
        reports.push({
          name: `${receiver}!${domain}!${day / 1000}!${day / 1000 + 86_399}.xml`,
          kind: "aggregate",
          text: aggregateXml(reporter, reportId, domain, policy, day, rows),
        });
      }
    }
    if (day >= run.from && day < run.to && index % 2 === 0) {
      const random = new SeededRandom(`${options.seed}|failure|${date}`);
      const ip = random.pick(spoofIps);
      const at = day + random.int(0, 86_399) * 1000;
      reports.push({
        name: `linkedin.com!${policyMoveDomain}!${at / 1000}.eml`,
        kind: "failure",
        text: failureReport(random, policyMoveDomain, ip, at),
      });
    }
  }
  return reports;
}
