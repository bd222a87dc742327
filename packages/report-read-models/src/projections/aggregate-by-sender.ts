import type { AggregateRowRecord } from "@dmarc-ledger/events";
import type { Projection } from "@dmarc-ledger/projection-engine";
import type { ReportSchema } from "../schema.js";
import { recordSenderFactChanges } from "../sender-rankings/change-numbers.js";
import { deltasRankingsNeed } from "../sender-rankings/delta-coverage.js";
import { appendSenderFactDeltas } from "../sender-rankings/fact-deltas.js";
import { type KeyColumn, SumsByKey } from "./add-sums.js";
import { rowParts } from "./report-parts.js";

/**
 * The policy override reasons (RFC 7489, PolicyOverrideType) by which a receiver says the message
 * was forwarded: a forwarder or a list breaks SPF and often DKIM, and a stricter policy would stop
 * mail its owner wants. `local_policy`, `sampled_out` and `other` say nothing of forwarding.
 */
const forwardingReasons = new Set(["forwarded", "trusted_forwarder", "mailing_list"]);

/** Whether the receiver marked the row as forwarded: ARC passed, or a forwarding override reason. */
export function isForwarded(row: AggregateRowRecord): boolean {
  return row.arc === "pass" || row.reasons.some((reason) => forwardingReasons.has(reason.type.toLowerCase()));
}

const senderKeyColumns: KeyColumn[] = [
  { name: "domain", type: "text" },
  { name: "t", type: "bigint" },
  { name: "source_ip", type: "text" },
  { name: "disposition", type: "text" },
  { name: "dmarc_pass", type: "boolean" },
  { name: "forwarded", type: "boolean" },
];

/**
 * The facts behind aggregate_by_sender and policy_impact: messages per policy domain, day, source
 * IP, disposition, DMARC result and forwarding. A source's sender (its service, base domain or
 * AS) is not in the key: it comes from source_ip_name at query time, so a name that arrives after
 * the reports (the resolver runs behind the intake) counts for all of them. A batch appends a row
 * per key it summed (migration 021): a key several batches wrote has several rows, summed by
 * every reader.
 */
export const aggregateBySenderProjection: Projection<ReportSchema> = {
  name: "aggregate_by_sender",
  // The sender rankings are built from agg_sender_fact (sender-rankings/): a rebuild starts them
  // afresh, with the change numbers that say when one is stale and the deltas added to them.
  tables: [
    "agg_sender_fact",
    "agg_sender_delta",
    "agg_sender_change_counter",
    "agg_sender_change",
    "sender_ranking_build",
    "sender_ranking_ip",
    "sender_ranking",
    "sender_ranking_pick",
  ],
  handles: new Set(["AggregateReportReceived"]),
  async apply(trx, events) {
    const sums = new SumsByKey("agg_sender_fact", senderKeyColumns, false, true);
    for (const part of rowParts(events)) {
      sums.add(
        [
          part.domain,
          part.t,
          part.row.sourceIp,
          part.row.disposition.toLowerCase(),
          part.verdict.dmarcPass,
          isForwarded(part.row),
        ],
        part.verdict,
        part.count,
      );
    }
    if (sums.size > 0) {
      await sums.write(trx);
      const seq = await recordSenderFactChanges(
        trx,
        [...sums.keys()].map((key) => ({ domain: key[0] as string, t: key[1] as number })),
      );
      if (seq !== null) {
        // Only the deltas a sender ranking may need (none where the queries group).
        const deltas = await deltasRankingsNeed(
          trx,
          [...sums.entries()].map(({ key, sums }) => ({
            domain: key[0] as string,
            t: key[1] as number,
            sourceIp: key[2] as string,
            disposition: key[3] as string,
            dmarcPass: key[4] as boolean,
            forwarded: key[5] as boolean,
            sums,
          })),
        );
        if (deltas.length > 0) await appendSenderFactDeltas(trx, seq, deltas);
      }
    }
  },
};
