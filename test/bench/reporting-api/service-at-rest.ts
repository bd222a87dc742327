import { evaluatorName } from "@dmarc-ledger/alerts";
import { type Projection, projectionLags } from "@dmarc-ledger/projection-engine";
import {
  maintainSenderRankings,
  maintainSourceRankings,
  maintainTenantDayTotals,
  type SenderRankingChange,
} from "@dmarc-ledger/report-read-models";
import type { Runtime } from "@dmarc-ledger/runtime";

/**
 * One round of the projector's upkeep (apps/projector/src/ranking-maintenance.ts): the source
 * rankings, the tenants' day totals and the sender rankings (around `now`, Unix seconds, when
 * given), as they stand once it has run. A bench runs it before starting the service, so that the
 * service's own first round finds nothing to build.
 */
export async function upkeepRound(
  db: Runtime["db"],
  now?: number,
): Promise<{ summary: string; senders: SenderRankingChange[] }> {
  const sources = await maintainSourceRankings(db);
  const days = await maintainTenantDayTotals(db);
  const senders = await maintainSenderRankings(db, now === undefined ? {} : { now });
  return {
    summary: `${sources.length} source rankings, ${days.length} day totals, ${senders.length} sender rankings`,
    senders,
  };
}

/**
 * Waits until the alert evaluator a just-started service runs has read every event in the store.
 * On a freshly loaded database it reads every report once (minutes at 10,000,000 rows), beside
 * the requests a bench times: those would measure that one-off catch-up, not the request path.
 * Returns how long it waited.
 */
export async function untilAlertsCaughtUp(runtime: Runtime, timeoutMs = 30 * 60_000): Promise<number> {
  const started = performance.now();
  const evaluator = { name: evaluatorName } as Projection;
  for (;;) {
    const [lag] = await projectionLags(runtime.db, runtime.store, [evaluator], 1);
    if (lag?.events === 0) return performance.now() - started;
    if (performance.now() - started > timeoutMs)
      throw new Error(`the alert evaluator was still behind after ${Math.round(timeoutMs / 1000)} s`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
