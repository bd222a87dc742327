import type { AlertRaised } from "@dmarc-ledger/events";
import type { Kysely, Transaction } from "kysely";
import { recordFinding } from "./findings.js";
import type { AlertsSchema } from "./schema.js";
import { type SenderName, sendersOf } from "./sender-names.js";

type Trx = Transaction<AlertsSchema>;
type Cause = AlertRaised["causedBy"];

/** What a new_sender alert says of one new source IP of one report. */
export interface NewSource {
  domain: string;
  tenantId: string;
  sourceIp: string;
  period: { start: string; end: string };
  figures: { messages: number; dmarcPass: number; reportDomain: string; reporter: string; reportId: string };
}

/** Names that stand for one sender whatever its addresses: a new address of one is not news. */
const byName = (name: SenderName) => name.kind === "service" || name.kind === "base_domain";

/**
 * The source IPs of a report new for its domain. One the resolver has named is decided by its
 * name (a service or a base domain: new when the domain has not seen that name; else by its
 * address). One not named yet waits for its name (alert_unnamed_new) up to ALERT_NAME_WAIT, or,
 * with no wait, is decided by its address now. The domain's first report is its baseline: its
 * names become known (when named), nothing is raised.
 */
export async function newSources(
  trx: Trx,
  sources: NewSource[],
  options: {
    baseline: boolean;
    raising: boolean;
    nameWaitMs: number;
    recordedAt: Date;
    /** The evaluator's clock: which report days are inside the rule's window. */
    now: Date;
    cause: Cause;
  },
): Promise<void> {
  const names = await sendersOf(
    trx,
    sources.map((source) => source.sourceIp),
  );
  for (const source of sources) {
    const name = names.get(source.sourceIp);
    if (name) {
      await decideNamed(
        trx,
        source,
        name,
        options.baseline || !options.raising,
        options.recordedAt,
        options.now,
        options.cause,
      );
    } else if (options.baseline || !options.raising) {
      // Its name is learnt when it comes (sourceNamedForNewSenders: it is a known address).
    } else if (options.nameWaitMs > 0) {
      const [cause] = options.cause;
      await trx
        .insertInto("alert_unnamed_new")
        .values({
          domain: source.domain,
          source_ip: source.sourceIp,
          tenant_id: source.tenantId,
          baseline: false,
          period_start: source.period.start,
          period_end: source.period.end,
          figures: JSON.stringify(source.figures),
          recorded_at: options.recordedAt,
          stream: cause!.stream,
          position: cause!.position,
        })
        .onConflict((oc) => oc.columns(["domain", "source_ip"]).doNothing())
        .execute();
    } else {
      await recordByAddress(trx, source, options.cause, options.now);
    }
  }
}

/** A source IP named: the new addresses waiting for it are decided, and its name is known wherever it sent. */
export async function sourceNamedForNewSenders(
  trx: Trx,
  ip: string,
  name: SenderName,
  cause: Cause,
  oldest: Date,
  now: Date,
): Promise<void> {
  const waiting = await trx
    .deleteFrom("alert_unnamed_new")
    .where("source_ip", "=", ip)
    .returningAll()
    .execute();
  for (const row of waiting) {
    const source: NewSource = {
      domain: row.domain,
      tenantId: row.tenant_id,
      sourceIp: ip,
      period: { start: row.period_start, end: row.period_end },
      figures: JSON.parse(row.figures),
    };
    await decideNamed(trx, source, name, row.recorded_at < oldest, now, now, [
      { stream: row.stream, position: row.position },
      ...cause,
    ]);
  }
  if (!byName(name)) return;
  // An address known before its name (a baseline's, one decided by its address) makes its name known.
  const domains = await trx
    .selectFrom("alert_known_sender")
    .select("domain")
    .where("source_ip", "=", ip)
    .execute();
  if (domains.length === 0) return;
  await trx
    .insertInto("alert_known_name")
    .values(domains.map(({ domain }) => ({ domain, sender: name.sender, first_seen: now })))
    .onConflict((oc) => oc.columns(["domain", "sender"]).doNothing())
    .execute();
}

/**
 * New addresses that waited ALERT_NAME_WAIT without a name: decided by their address (run by the
 * periodic check; the row's deletion decides who decides it, this or the evaluator's naming).
 */
export async function decideUnnamedSenders(
  db: Kysely<AlertsSchema>,
  options: { nameWaitMs: number; maxEventAgeMs: number; now?: Date },
): Promise<number> {
  const now = options.now ?? new Date();
  const expired = await db
    .deleteFrom("alert_unnamed_new")
    .where("recorded_at", "<", new Date(now.getTime() - options.nameWaitMs))
    .returningAll()
    .execute();
  let recorded = 0;
  for (const row of expired) {
    if (row.recorded_at.getTime() < now.getTime() - options.maxEventAgeMs) continue;
    const source: NewSource = {
      domain: row.domain,
      tenantId: row.tenant_id,
      sourceIp: row.source_ip,
      period: { start: row.period_start, end: row.period_end },
      figures: JSON.parse(row.figures),
    };
    const cause = [{ stream: row.stream, position: row.position }];
    // Recorded as changed now by the wall clock: `now` may be a later one that decides the wait.
    const outcome = await db
      .transaction()
      .execute((trx) => recordByAddress(trx, source, cause, now, new Date()));
    if (outcome === "recorded") recorded += 1;
  }
  return recorded;
}

async function decideNamed(
  trx: Trx,
  source: NewSource,
  name: SenderName,
  silent: boolean,
  at: Date,
  now: Date,
  cause: Cause,
): Promise<void> {
  if (!byName(name)) {
    if (!silent) await recordByAddress(trx, source, cause, now);
    return;
  }
  const inserted = await trx
    .insertInto("alert_known_name")
    .values({ domain: source.domain, sender: name.sender, first_seen: at })
    .onConflict((oc) => oc.columns(["domain", "sender"]).doNothing())
    .executeTakeFirst();
  if (silent || Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return;
  await recordFinding(
    trx,
    {
      tenantId: source.tenantId,
      rule: "new_sender",
      domain: source.domain,
      day: source.period.start.slice(0, 10),
      members: [
        {
          key: `sender:${name.sender}`,
          sender: name.sender,
          kind: name.kind,
          sourceIp: source.sourceIp,
          reporter: source.figures.reporter,
        },
      ],
      cause,
    },
    now,
  );
}

/** A new address with no name to go by: a member of its day's finding by its address. */
function recordByAddress(
  trx: Trx,
  source: NewSource,
  cause: Cause,
  now: Date,
  changedAt: Date = now,
): Promise<"recorded" | "skipped" | "off"> {
  const ip = source.sourceIp;
  return recordFinding(
    trx,
    {
      tenantId: source.tenantId,
      rule: "new_sender",
      domain: source.domain,
      day: source.period.start.slice(0, 10),
      members: [{ key: `ip:${ip}`, sender: ip, kind: "ip", sourceIp: ip, reporter: source.figures.reporter }],
      cause,
    },
    now,
    changedAt,
  );
}
