import { type Kysely, sql } from "kysely";
import type { KeysHandle } from "./data-keys.js";
import type { PersonalDataSchema } from "./schema.js";

const leaseName = "retention";

/**
 * Takes the retention job's lease for `ms` when nobody holds it and the last run is at least
 * `intervalMs` old: true when this holder may run now. A row, not an advisory lock: the run appends
 * events through other connections (on PGlite, the only one), which a held session would block.
 */
export async function takeRetentionLease(
  handle: KeysHandle,
  holder: string,
  ms: number,
  intervalMs: number,
): Promise<boolean> {
  const db = handle as Kysely<PersonalDataSchema>;
  await db
    .insertInto("retention_lease")
    .values({ name: leaseName, holder: null, leased_until: new Date(0), last_run: null })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();
  const taken = await db
    .updateTable("retention_lease")
    .set({ holder, leased_until: sql<Date>`now() + ${`${ms} milliseconds`}::interval` })
    .where("name", "=", leaseName)
    .where("leased_until", "<", sql<Date>`now()`)
    .where((eb) =>
      eb.or([
        eb("last_run", "is", null),
        eb("last_run", "<=", sql<Date>`now() - ${`${intervalMs} milliseconds`}::interval`),
      ]),
    )
    .returning("name")
    .executeTakeFirst();
  return taken !== undefined;
}

/** The run is done: the lease is free and the next run is due `intervalMs` from now. */
export async function releaseRetentionLease(handle: KeysHandle, holder: string, ran: boolean): Promise<void> {
  const db = handle as Kysely<PersonalDataSchema>;
  await db
    .updateTable("retention_lease")
    .set({
      holder: null,
      leased_until: new Date(0),
      ...(ran ? { last_run: sql<Date>`now()` } : {}),
    })
    .where("name", "=", leaseName)
    .where("holder", "=", holder)
    .execute();
}
