import type { KeysHandle } from "@dmarc-ledger/personal-data";
import { takeRetentionLease } from "@dmarc-ledger/personal-data";

/**
 * Holds the deployment's retention lease for `ms`, as a projector running a long run would: the
 * service's own retention job (first poll a minute after start, with today's date) then leaves
 * the run to the test, which applies retention at a fixed date of its own. Waits while the
 * service's job holds the lease itself.
 */
export async function holdRetentionLease(db: KeysHandle, ms = 3_600_000): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await takeRetentionLease(db, "test: retention at a fixed date", ms, 0))) {
    if (Date.now() > deadline) throw new Error("the retention lease stayed held for a minute");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
