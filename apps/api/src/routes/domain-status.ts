import { findDomain } from "@dmarc-ledger/tenancy";
import { ApiError } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";
import { domainParam, notYourDomain } from "../params/domain-param.js";

export const domainStatusEndpoint: Endpoint = {
  name: "domain_status",
  method: "GET",
  scope: "read",
  summary:
    "Onboarding check of one of your domains from live DNS: DMARC record, where reports go, our authorisation record, SPF and its Safe SPF root, and what to change.",
  handler: async (ctx) => {
    const domain = domainParam(ctx.query);
    const owned = await findDomain(ctx.deps.db, domain);
    if (owned?.tenantId !== ctx.state.holder!.tenantId) throw notYourDomain(domain);
    const check = ctx.deps.checkDomainStatus;
    if (!check)
      throw new ApiError(503, "not_ready", "The onboarding check is not configured in this process.");
    const status = await check(domain);
    ctx.body = {
      status: "SUCCESS",
      domain,
      checked_at: new Date().toISOString(),
      ok: status.problems.length === 0,
      dmarc: status.dmarc,
      authorization: status.authorization,
      spf: status.spf,
      tls_rpt: status.tls_rpt,
      problems: status.problems,
    };
  },
};
