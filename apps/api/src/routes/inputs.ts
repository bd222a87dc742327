import { type ArchiveStatus, isTenantInput, listTenantInputs, reprocessInput } from "@dmarc-ledger/intake";
import { tenantReportDomainNames } from "@dmarc-ledger/report-read-models";
import { findDomain } from "@dmarc-ledger/tenancy";
import { ApiError, badParameter } from "../api-error.js";
import { callerMeta } from "../caller-meta.js";
import type { Endpoint } from "../endpoints.js";
import { notYourDomain } from "../params/domain-param.js";
import { requiredField } from "../params/form-field.js";
import { parseListParams } from "../params/list-params.js";
import { awaitProjection } from "../read-your-writes.js";
import type { ApiContext } from "../state.js";

const statuses: ArchiveStatus[] = ["received", "stored", "duplicate", "rejected"];

/**
 * The tenant's report domains, and the tenant itself for its uploads; with a domain filter, that
 * domain's reports only.
 */
async function ownerOf(ctx: ApiContext, domain?: string) {
  const tenantId = ctx.state.holder!.tenantId;
  const domains = await tenantReportDomainNames(ctx.deps.db, tenantId);
  if (domain === undefined) return { tenantId, domains };
  if ((await findDomain(ctx.deps.db, domain))?.tenantId !== tenantId) throw notYourDomain(domain);
  return {
    tenantId: null,
    domains: domains.filter((name) => name === domain || name.endsWith(`.${domain}`)),
  };
}

export const inputsEndpoint: Endpoint = {
  name: "inputs",
  method: "GET",
  scope: "read",
  summary:
    "The inputs received for your domains or sent by you, last received in the period, newest first, with what became of them (optional status).",
  handler: async (ctx) => {
    const { status, ...rest } = ctx.query;
    if (status !== undefined && (typeof status !== "string" || !statuses.includes(status as ArchiveStatus))) {
      throw badParameter("status", `must be one of ${statuses.join(", ")}.`);
    }
    const period = parseListParams(rest, ctx.state.holder!.tenantId);
    const page = await listTenantInputs(ctx.deps.db as never, await ownerOf(ctx, period.domain), {
      start: new Date(period.start * 1000),
      end: new Date(period.end * 1000 + 999),
      page: period.page,
      perPage: period.perPage,
      ...(status ? { status: status as ArchiveStatus } : {}),
    });
    ctx.body = {
      status: "SUCCESS",
      total: page.total,
      records: page.records.map((input) => ({
        Sha256: input.sha256,
        Bytes: input.size,
        Channel: input.channel,
        Outcome: input.status,
        Code: input.code,
        Reason: input.reason,
        Items: input.items.map((item) =>
          item.kind === "rejected"
            ? { kind: item.kind, code: item.code, reason: item.reason }
            : {
                kind: item.kind,
                domain: item.domain,
                rows: item.kind === "aggregate" ? item.rows : null,
                messages: item.kind === "aggregate" ? item.messages : null,
                status: item.status,
              },
        ),
        TimesReceived: input.timesReceived,
        FirstSeen: input.firstSeen.toISOString(),
        LastSeen: input.lastSeen.toISOString(),
        ProcessedAt: input.processedAt?.toISOString() ?? null,
      })),
    };
  },
};

export const reprocessInputEndpoint: Endpoint = {
  name: "reprocess_input",
  method: "PUT",
  scope: "ingest",
  summary: "Runs one of your rejected inputs through the parser again (form field sha256), e.g. after a fix.",
  handler: async (ctx) => {
    const sha256 = requiredField(ctx, "sha256");
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw badParameter("sha256", "must be 64 lower-case hex digits.");
    const notFound = new ApiError(404, "unknown_input", "You have no rejected input with this SHA-256.");
    if (!(await isTenantInput(ctx.deps.db as never, await ownerOf(ctx), sha256))) throw notFound;
    const { config, store, db, metrics } = ctx.deps;
    const done = await reprocessInput(
      {
        store,
        db,
        archiveMaxBytes: config.archiveMaxBytes,
        parseOptions: { maxDecompressedBytes: config.maxDecompressedBytes },
        parseThreads: 0,
        ...(metrics ? { metrics: metrics.intake } : {}),
        ...(ctx.deps.dataKeys ? { dataKeys: ctx.deps.dataKeys } : {}),
      },
      sha256,
      callerMeta(ctx),
    );
    if (!done) throw notFound;
    if (done.after === null) {
      throw new ApiError(409, "not_archived", "The archive kept no bytes of this input (it was too large).");
    }
    await awaitProjection(ctx, await ctx.deps.store.headPosition());
    ctx.body = {
      status: "SUCCESS",
      sha256,
      before: done.before.status,
      outcome: done.after.status,
      reason: done.after.items.find((item) => item.kind === "rejected")?.reason ?? null,
    };
  },
};
