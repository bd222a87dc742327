import type { AlertRaised, SourceIpResolved } from "@dmarc-ledger/events";
import { sql, type Transaction } from "kysely";
import { recordFinding } from "./findings.js";
import { tenantRule } from "./rules.js";
import type { AlertsSchema } from "./schema.js";
import { approvalOf, recordSourceName, type SenderName, sendersOf } from "./sender-names.js";

type Trx = Transaction<AlertsSchema>;
type Cause = AlertRaised["causedBy"];

/** One report's DMARC failures of a domain, by source IP. */
export interface FailingSources {
  domain: string;
  tenantId: string;
  /** UTC day of the report's begin. */
  day: string;
  failedByIp: Map<string, number>;
  recordedAt: Date;
  cause: Cause;
}

/**
 * The unapproved_sender rule for one report: each failing IP with a name is counted for its sender
 * (unless the IP or its sender is approved) and decided now; an IP the resolver has not named yet
 * waits in alert_unnamed_failing for its SourceIpResolved (sourceNamed).
 */
export async function unapprovedSenders(
  trx: Trx,
  failing: FailingSources,
  oldest: Date,
  now: Date,
): Promise<void> {
  await trx.deleteFrom("alert_unnamed_failing").where("recorded_at", "<", oldest).execute();
  const ips = [...failing.failedByIp.keys()];
  if (ips.length === 0) return;
  const names = await sendersOf(trx, ips);
  for (const ip of ips) {
    const failed = failing.failedByIp.get(ip)!;
    const name = names.get(ip);
    if (name) {
      await decide(trx, failing.domain, failing.tenantId, ip, name, failing.day, failed, failing.cause, now);
      continue;
    }
    const [cause] = failing.cause;
    await trx
      .insertInto("alert_unnamed_failing")
      .values({
        domain: failing.domain,
        source_ip: ip,
        day: failing.day,
        failed,
        recorded_at: failing.recordedAt,
        stream: cause!.stream,
        position: cause!.position,
      })
      .onConflict((oc) =>
        oc.columns(["domain", "source_ip", "day"]).doUpdateSet({
          failed: sql`alert_unnamed_failing.failed + excluded.failed`,
          recorded_at: sql`excluded.recorded_at`,
          stream: sql`excluded.stream`,
          position: sql`excluded.position`,
        }),
      )
      .execute();
  }
}

/** A source IP named: its waiting failures are decided for its sender. */
export async function sourceNamed(
  trx: Trx,
  answer: SourceIpResolved,
  cause: Cause,
  oldest: Date,
  now: Date,
): Promise<void> {
  await recordSourceName(trx, answer);
  const waiting = await trx
    .deleteFrom("alert_unnamed_failing")
    .where("source_ip", "=", answer.ip)
    .returningAll()
    .execute();
  if (waiting.length === 0) return;
  const name = (await sendersOf(trx, [answer.ip])).get(answer.ip)!;
  for (const row of waiting) {
    if (row.recorded_at < oldest) continue;
    const owner = await trx
      .selectFrom("alert_domain_owner")
      .select("tenant_id")
      .where("domain", "=", row.domain)
      .executeTakeFirst();
    if (!owner) continue;
    await decide(
      trx,
      row.domain,
      owner.tenant_id,
      answer.ip,
      name,
      row.day,
      Number(row.failed),
      [{ stream: row.stream, position: row.position }, ...cause],
      now,
    );
  }
}

async function decide(
  trx: Trx,
  domain: string,
  tenantId: string,
  ip: string,
  name: SenderName,
  day: string,
  failed: number,
  cause: Cause,
  now: Date,
): Promise<void> {
  // An unknown sender cannot be approved (sender_approval refuses "unknown": approve its
  // addresses by range instead), so an alert asking for its approval is one nobody can act on.
  // Its failing mail still counts in dmarc_failure_share, and a new address in new_sender.
  if (name.kind === "unknown") return;
  const approved = await approvalOf(trx, domain, ip, name.sender);
  if (approved === true) return;
  const counted = await trx
    .insertInto("alert_sender_day")
    .values({ domain, sender: name.sender, day, failed })
    .onConflict((oc) =>
      oc
        .columns(["domain", "sender", "day"])
        .doUpdateSet({ failed: sql`alert_sender_day.failed + excluded.failed` }),
    )
    .returning("failed")
    .executeTakeFirstOrThrow();
  const rule = await tenantRule(trx, tenantId, "unapproved_sender");
  if (!rule.enabled || Number(counted.failed) < rule.params.min_failed!) return;
  // A member of the day's finding: its figures are the day's when the finding is sent (findings.ts).
  await recordFinding(
    trx,
    {
      tenantId,
      rule: "unapproved_sender",
      domain,
      day,
      members: [
        { key: `sender:${name.sender}`, sender: name.sender, kind: name.kind, sourceIp: ip, reporter: "" },
      ],
      cause,
    },
    now,
  );
}
