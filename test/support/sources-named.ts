import { waitForProjections } from "@dmarc-ledger/projection-engine";
import type { Runtime } from "@dmarc-ledger/runtime";
import { allProjections } from "@dmarc-ledger/runtime/projections";

/**
 * Waits until the service has named every source its reports show (it names them at first
 * sight, in the background) and the read models have caught up with those names: answers read
 * before then change as names arrive. The default stays inside the suite's hook timeout (120 s),
 * so that a wait too long says how many sources were left rather than that the hook timed out.
 */
export async function waitForEverySourceNamed(runtime: Runtime, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { count } = await runtime.db
      .selectFrom("agg_sender_fact as f")
      .leftJoin("source_ip_name as n", "n.source_ip", "f.source_ip")
      .select((eb) => eb.fn.count<string>("f.source_ip").distinct().as("count"))
      .where("n.source_ip", "is", null)
      .executeTakeFirstOrThrow();
    if (Number(count) === 0) break;
    if (Date.now() > deadline) throw new Error(`${count} sources still unnamed after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const head = (await runtime.store.headPosition()) ?? 0n;
  if (!(await waitForProjections(runtime.db, allProjections, head, 30_000))) {
    throw new Error("the read models did not catch up with the sources' names within 30 s");
  }
}
