import type { FailureReport } from "@dmarc-ledger/dmarc-reports";
import { type ForensicPersonalFields, type Personal, rawKeepLimit } from "@dmarc-ledger/events";
import type { DataKeys, KeysHandle } from "@dmarc-ledger/personal-data";
import { noTenant } from "@dmarc-ledger/personal-data";
import type { InputBytes } from "./input-bytes.js";
import type { ParsedInput } from "./parse-input.js";

/**
 * How ingest stores what in an input can identify a person (docs/privacy.md): a failure report's
 * personal fields, a rejected input's bytes. Sealed under the data key of its tenant and month,
 * or in clear when the process runs without data keys (encryption off: tests of other parts,
 * and the baseline of `pnpm bench personal-data`).
 */
export interface PersonalSealer {
  failureReport(report: FailureReport): Promise<Personal<ForensicPersonalFields>>;
  rejectedInput(raw: Uint8Array): Promise<Personal<{ base64: string }>>;
}

/** The fields of a failure report that can identify a person (docs/privacy.md). */
export function personalFieldsOf(report: FailureReport): ForensicPersonalFields {
  const { subject, sourceIp, headers, originalMailFrom, originalRcptTo } = report;
  return { subject, sourceIp, headers, originalMailFrom, originalRcptTo };
}

const rawOf = (raw: Uint8Array) => ({ base64: Buffer.from(raw).toString("base64") });

export const clearSealer: PersonalSealer = {
  failureReport: async (report) => ({ clear: personalFieldsOf(report) }),
  rejectedInput: async (raw) => ({ clear: rawOf(raw) }),
};

/**
 * Seals with the data keys read through `handle`, making a month's key on its first use: outside
 * any transaction that appends (nothing may be written in one before its append: the order guard
 * of packages/event-store).
 */
export function keySealer(
  keys: DataKeys,
  handle: KeysHandle,
  uploader: string | null,
  at: Date,
): PersonalSealer {
  return {
    failureReport: async (report) => ({
      sealed: await keys.sealForDomain(handle, report.reportedDomain, at, personalFieldsOf(report)),
    }),
    rejectedInput: async (raw) => ({ sealed: await keys.seal(handle, uploader ?? noTenant, at, rawOf(raw)) }),
  };
}

/**
 * For the inputs committed in one transaction with others (the commit group): everything an input
 * will seal is sealed before, so that the transaction, which holds the append lock, runs no query
 * of ours. The failure reports it holds and, when it was refused, its bytes. Anything else (an
 * input that failed while it was stored, kept as an internal error) is sealed in the transaction
 * under a key that exists, read only; else it fails, and the channel does not acknowledge it.
 */
export async function presealed(
  keys: DataKeys,
  handle: KeysHandle,
  parsed: ParsedInput,
  input: InputBytes,
  uploader: string | null,
  at: Date,
): Promise<(transaction: KeysHandle) => PersonalSealer> {
  const before = keySealer(keys, handle, uploader, at);
  const reports = new Map<FailureReport, Personal<ForensicPersonalFields>>();
  let refused: { raw: Buffer; sealed: Personal<{ base64: string }> } | null = null;
  if (parsed.kind === "held") {
    for (const item of parsed.items) {
      if (item.kind === "failure") reports.set(item.report, await before.failureReport(item.report));
    }
  } else if (parsed.kind === "refused" && (await input.size()) <= rawKeepLimit) {
    const raw = Buffer.from(await input.readAll());
    refused = { raw, sealed: await before.rejectedInput(raw) };
  }
  return (transaction) => {
    const inTransaction: PersonalSealer = {
      failureReport: async (report) => ({
        sealed: await keys.sealForDomain(
          transaction,
          report.reportedDomain,
          at,
          personalFieldsOf(report),
          false,
        ),
      }),
      rejectedInput: async (raw) => ({
        sealed: await keys.seal(transaction, uploader ?? noTenant, at, rawOf(raw), false),
      }),
    };
    return {
      failureReport: async (report) => reports.get(report) ?? inTransaction.failureReport(report),
      rejectedInput: async (raw) =>
        refused?.raw.equals(raw) ? refused.sealed : inTransaction.rejectedInput(raw),
    };
  };
}
