import { listDomains } from "@dmarc-ledger/queries";
import { DomainNotFoundError, domainHistory, InvalidGroupError, setDomainGroup } from "@dmarc-ledger/tenancy";
import { listTenantUsers } from "@dmarc-ledger/users";
import { ApiError } from "../api-error.js";
import { callerMeta } from "../caller-meta.js";
import type { Endpoint } from "../endpoints.js";
import { domainParam, notYourDomain } from "../params/domain-param.js";
import { requiredField } from "../params/form-field.js";
import { parsePageParams } from "../params/page-params.js";
import { awaitProjection, readRoute } from "../read-your-writes.js";
import type { ApiContext } from "../state.js";
import { peopleKeys, usersDb } from "./session.js";

export const domainsEndpoint: Endpoint = {
  name: "domains",
  method: "GET",
  scope: "read",
  summary: "The tenant's domains with their group and Safe SPF status.",
  handler: async (ctx) => {
    const { page, perPage } = parsePageParams(ctx.query);
    const { db } = await readRoute(ctx);
    const result = await listDomains(db, { tenantId: ctx.state.holder!.tenantId, page, perPage });
    ctx.body = { status: "SUCCESS", total: result.total, records: result.records };
  },
};

export const domainGroupEndpoint: Endpoint = {
  name: "domain_group",
  method: "PUT",
  scope: "write",
  summary: "Puts a domain in a group (form fields domain, group); an empty group removes it.",
  handler: async (ctx) => {
    const holder = ctx.state.holder!;
    const domain = requiredField(ctx, "domain");
    const body = (ctx.request as { body?: Record<string, unknown> }).body ?? {};
    const group = typeof body.group === "string" ? body.group : "";
    try {
      const position = await setDomainGroup(
        ctx.deps.store,
        { tenantId: holder.tenantId, domain, group },
        callerMeta(ctx),
      );
      await awaitProjection(ctx, position);
    } catch (error) {
      if (error instanceof DomainNotFoundError) throw notYourDomain(domain);
      if (error instanceof InvalidGroupError) throw new ApiError(400, "invalid_parameter", error.message);
      throw error;
    }
    ctx.body = { status: "SUCCESS" };
  },
};

/**
 * The addresses of the tenant's own people who caused these events, opened as the people list
 * opens them; someone no longer of the tenant stays `user:<id>`. Without the data keys, none.
 */
async function memberEmails(ctx: ApiContext, records: readonly { CausedBy: string }[]) {
  if (!ctx.deps.dataKeys || !records.some((record) => record.CausedBy.startsWith("user:"))) {
    return new Map<string, string>();
  }
  const people = await listTenantUsers(usersDb(ctx), peopleKeys(ctx), ctx.state.holder!.tenantId);
  return new Map(people.flatMap((person) => (person.email ? [[person.userId, person.email] as const] : [])));
}

export const historyEndpoint: Endpoint = {
  name: "history",
  method: "GET",
  scope: "read",
  summary: "The audit trail of a domain: every event, in order, with its time and who caused it.",
  handler: async (ctx) => {
    const { page, perPage } = parsePageParams(ctx.query, ["domain"]);
    const domain = domainParam(ctx.query, ["page", "per_page"]);
    const records = await domainHistory(ctx.deps.db, ctx.state.holder!.tenantId, domain);
    if (!records) throw notYourDomain(domain);
    const shown = records.slice((page - 1) * perPage, page * perPage);
    const emails = await memberEmails(ctx, shown);
    ctx.body = {
      status: "SUCCESS",
      domain,
      total: records.length,
      records: shown.map((record) => ({
        ...record,
        CausedByEmail: record.CausedBy.startsWith("user:")
          ? (emails.get(record.CausedBy.slice(5)) ?? null)
          : null,
      })),
    };
  },
};
