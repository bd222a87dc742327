import type { ForensicPersonalFields, Personal } from "@dmarc-ledger/events";
import type { DataKeys, KeysHandle } from "@dmarc-ledger/personal-data";
import { noTenant } from "@dmarc-ledger/personal-data";
import type { ParsedInput } from "./parse-input.js";

/**
 * How ingest stores what in an input can identify a person (docs/privacy.md): a failure report's
 * personal fields, a rejected input's bytes. Sealed under the data key of its tenant and month,
 * or in clear when the process runs without data keys (encryption off: tests of other parts,
 * and the baseline of `pnpm bench intake`).
 */
export interface PersonalSealer {
  failureReport(domain: string, fields: ForensicPersonalFields): Promise<Personal<ForensicPersonalFields>>;
  rejectedInput(raw: Uint8Array): Promise<Personal<{ base64: string }>>;
}

export const clearSealer: PersonalSealer = {
  failureReport: async (_domain, fields) => ({ clear: fields }),
  rejectedInput: async (raw) => ({ clear: { base64: Buffer.from(raw).toString("base64") } }),
};

/**
 * Seals with the data keys read through `handle`. `create` false inside the transaction that
 * appends (see DataKeys.seal): the keys were made before it by prepareSealing.
 */
export function keySealer(
  keys: DataKeys,
  handle: KeysHandle,
  uploader: string | null,
  at: Date,
  create: boolean,
): PersonalSealer {
  return {
    failureReport: async (domain, fields) => ({
      sealed: await keys.seal(handle, await keys.tenantOf(handle, domain), at, fields, create),
    }),
    rejectedInput: async (raw) => ({
      sealed: await keys.seal(
        handle,
        uploader ?? noTenant,
        at,
        { base64: Buffer.from(raw).toString("base64") },
        create,
      ),
    }),
  };
}

/**
 * Makes, outside the appending transaction, the keys its seals will read: of the tenants the
 * failure reports' domains count for and, for a rejection, of the uploader. An aggregate report
 * alone needs none, and costs nothing here.
 */
export async function prepareSealing(
  keys: DataKeys,
  handle: KeysHandle,
  parsed: ParsedInput,
  uploader: string | null,
  at: Date,
): Promise<void> {
  const tenants: string[] = [];
  if (parsed.kind === "refused") tenants.push(uploader ?? noTenant);
  if (parsed.kind === "held") {
    for (const item of parsed.items) {
      if (item.kind === "failure") tenants.push(await keys.tenantOf(handle, item.report.reportedDomain));
    }
  }
  if (tenants.length > 0) await keys.prepare(handle, tenants, at);
}
