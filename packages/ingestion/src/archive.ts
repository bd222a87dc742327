import { type Kysely, sql } from "kysely";
import type { IngestedItem, InputBytes } from "./ingest.js";
import type { ArchiveStatus, IntakeSchema } from "./schema.js";
import { InputTooLargeError, isSpooled, type SpooledInput, sha256Of, spool } from "./spool.js";

export interface ArchivedInput {
  sha256: string;
  size: number;
  /** "new": first time these bytes arrived; "seen": the archive had them already. */
  archive: "new" | "seen";
}

/**
 * Stores the raw input (compressed, by SHA-256) and this receipt of it, and commits, before
 * anything is parsed: whatever happens next, the input is not lost. Inputs above `keepLimit`
 * are recorded by hash, size and outcome only.
 */
export async function archiveInput(
  db: Kysely<IntakeSchema>,
  input: InputBytes,
  receipt: { channel: string; source: string },
  keepLimit: number,
): Promise<{ archived: ArchivedInput; spooled: SpooledInput | null }> {
  let spooled: SpooledInput | null = isSpooled(input) ? input : null;
  let sha256: string;
  let size: number;
  if (spooled) {
    sha256 = spooled.sha256;
    size = spooled.byteLength;
  } else {
    try {
      spooled = await spool(input.open(), keepLimit);
      sha256 = spooled.sha256;
      size = spooled.byteLength;
    } catch (error) {
      if (!(error instanceof InputTooLargeError)) throw error;
      sha256 = await sha256Of(input);
      size = await input.size();
    }
  }
  const kept = spooled !== null && size <= keepLimit;
  const archived = await db.transaction().execute(async (trx) => {
    // Two channels may receive the same bytes at the same moment: the second insert waits for
    // the first to commit, then inserts nothing and counts a receipt of the row instead.
    const inserted = await trx
      .insertInto("raw_input")
      .values({
        sha256,
        size,
        compression: kept ? "gzip" : null,
        content: kept ? spooled!.compressed : null,
        channel: receipt.channel,
        source: receipt.source,
        status: "received",
        code: null,
        reason: null,
      })
      .onConflict((oc) => oc.column("sha256").doNothing())
      .returning("sha256")
      .executeTakeFirst();
    if (!inserted) {
      await trx
        .updateTable("raw_input")
        .set({ last_seen: sql<Date>`now()`, times_received: sql<number>`times_received + 1` })
        .where("sha256", "=", sha256)
        .execute();
    }
    await trx
      .insertInto("raw_input_receipt")
      .values({ sha256, channel: receipt.channel, source: receipt.source })
      .execute();
    return { sha256, size, archive: inserted ? "new" : "seen" } satisfies ArchivedInput;
  });
  return { archived, spooled: kept ? spooled : null };
}

/** What the input's items say became of it. */
export function statusOf(items: readonly IngestedItem[]): Exclude<ArchiveStatus, "received"> {
  if (items.some((item) => item.kind === "rejected")) return "rejected";
  if (items.some((item) => item.status === "stored" || item.status === "resumed")) return "stored";
  return "duplicate";
}

/** Records the outcome of processing an archived input. */
export async function recordOutcome(
  db: Kysely<IntakeSchema>,
  sha256: string,
  items: readonly IngestedItem[],
): Promise<void> {
  const status = statusOf(items);
  const rejected = items.find((item) => item.kind === "rejected");
  await db
    .updateTable("raw_input")
    .set({
      // Bytes whose reports were stored by an earlier (or concurrent) receipt stay "stored": a
      // later copy finds duplicates, but the input itself is what put them there. Decided in the
      // statement, so that two receipts finishing together cannot undo it.
      status:
        status === "duplicate"
          ? sql<ArchiveStatus>`case when status = 'stored' then 'stored' else 'duplicate' end`
          : status,
      code: rejected?.kind === "rejected" ? rejected.code : null,
      reason: rejected?.kind === "rejected" ? rejected.reason : null,
      items: JSON.stringify(items),
      processed_at: sql<Date>`now()`,
    })
    .where("sha256", "=", sha256)
    .execute();
}
