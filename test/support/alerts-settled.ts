import { type AlertsSchema, evaluatorName } from "@dmarc-ledger/alerts";
import { type Projection, projectionLags, waitForProjections } from "@dmarc-ledger/projection-engine";
import type { Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";
import type { Kysely } from "kysely";

/**
 * Waits until the service has raised every alert the stored events call for and lists them: the
 * evaluator has read every event, no finding waits to settle, no decision waits in the outbox or
 * for a sender's name, and the read models have the AlertRaised events. Counts of alerts read
 * before then still grow.
 */
export async function waitForAlertsSettled(runtime: Runtime, timeoutMs = 60_000): Promise<void> {
  const db = runtime.db as unknown as Kysely<AlertsSchema>;
  const evaluator = { name: evaluatorName } as Projection;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const [lag] = await projectionLags(runtime.db, runtime.store, [evaluator], 1);
    const unpublished = await db
      .selectFrom("alert_outbox")
      .select("alert_id")
      .where("published", "=", false)
      .limit(1)
      .execute();
    const unnamed = await db.selectFrom("alert_unnamed_new").select("source_ip").limit(1).execute();
    const unsent = await db
      .selectFrom("alert_finding")
      .select("day")
      .where("pending", "=", true)
      .limit(1)
      .execute();
    const unnoticed = await db
      .selectFrom("alert_skipped_finding")
      .select("day")
      .where("noticed", "=", false)
      .limit(1)
      .execute();
    const waiting = unpublished.length + unnamed.length + unsent.length + unnoticed.length;
    if (lag?.events === 0 && waiting === 0) break;
    if (Date.now() > deadline) throw new Error(`alerts still being raised after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const head = (await runtime.store.headPosition()) ?? 0n;
  if (!(await waitForProjections(runtime.db, allProjections, head, 30_000))) {
    throw new Error("the read models did not list the alerts within 30 s");
  }
}
