import { policyImpact, type StricterPolicy } from "@dmarc-ledger/queries";
import { findDomain } from "@dmarc-ledger/tenancy";
import { badParameter } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";
import { notYourDomain } from "../params/domain-param.js";
import { parseListParams } from "../params/list-params.js";
import { answerOnce } from "./list-endpoint.js";

const policies: readonly StricterPolicy[] = ["quarantine", "reject"];

/** GET policy_impact: the period's parameters, domain, and the policy to weigh (required). */
export const policyImpactEndpoint: Endpoint = {
  name: "policy_impact",
  method: "GET",
  scope: "read",
  summary:
    "Per domain and sender, the failing messages p=quarantine or p=reject would stop: legitimate at risk and abuse stopped, with totals.",
  handler: async (ctx) => {
    const { policy: raw, ...rest } = ctx.query as Record<string, unknown>;
    if (raw === undefined || raw === "")
      throw badParameter("policy", 'is required: "quarantine" or "reject".');
    if (typeof raw !== "string" || !policies.includes(raw as StricterPolicy)) {
      throw badParameter("policy", 'must be "quarantine" or "reject".');
    }
    const policy = raw as StricterPolicy;
    const query = parseListParams(rest, ctx.state.holder!.tenantId);
    if (
      query.domain !== undefined &&
      (await findDomain(ctx.deps.db, query.domain))?.tenantId !== query.tenantId
    ) {
      throw notYourDomain(query.domain);
    }
    await answerOnce(ctx, "policy_impact", { ...query, policy }, async (asked) => {
      const impact = await policyImpact(ctx.deps.db, asked);
      return {
        status: "SUCCESS",
        policy,
        total: impact.total,
        totals: impact.totals,
        records: impact.records,
      };
    });
  },
};
