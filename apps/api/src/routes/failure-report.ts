import { personalDataPolicy } from "@dmarc-ledger/personal-data";
import { forensicReport } from "@dmarc-ledger/queries";
import { ApiError, badParameter } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";

/**
 * One failure report with what it says of the message beside /forensic's fields (the dashboard's
 * detail): read from the primary, as /forensic is, since it opens sealed fields.
 */
export const failureReportEndpoint: Endpoint = {
  name: "failure_report",
  method: "GET",
  scope: "read",
  summary:
    "One failure report by its ForensicId: /forensic's fields, and its feedback type, source IP, authentication failure, delivery result and SPF and DKIM results where the report holds them.",
  handler: async (ctx) => {
    for (const name of Object.keys(ctx.query)) {
      if (name !== "forensic_id") throw badParameter(name, "is not a parameter of this endpoint.");
    }
    const id = ctx.query.forensic_id;
    if (typeof id !== "string" || !/^[1-9]\d{0,17}$/.test(id)) {
      throw badParameter("forensic_id", "must be a ForensicId of /forensic (a whole number).");
    }
    const tenantId = ctx.state.holder!.tenantId;
    const record = await forensicReport(ctx.deps.db, tenantId, id, {
      keys: ctx.deps.dataKeys,
      redact: (await personalDataPolicy(ctx.deps.db, tenantId)).redaction,
    });
    if (!record)
      throw new ApiError(404, "unknown_failure_report", `No failure report ${id} of your domains.`);
    ctx.body = { status: "SUCCESS", record };
  },
};
