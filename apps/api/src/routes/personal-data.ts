import {
  InvalidPolicyError,
  type PersonalDataPolicy,
  personalDataPolicy,
  retentionDays,
  setPersonalDataPolicy,
} from "@dmarc-ledger/personal-data";
import { addUser, setPasswordUrl, userEmails } from "@dmarc-ledger/users";
import { ApiError, badParameter } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";
import { optionalField } from "../params/form-field.js";
import { awaitProjection } from "../read-your-writes.js";
import { sessionCookie } from "../session-cookie.js";
import type { ApiContext } from "../state.js";
import { peopleKeys, usersDb } from "./session.js";

/** The policy as the API shows it: snake_case, aggregate_days null when the facts are kept. */
function policyBody(policy: PersonalDataPolicy) {
  return {
    failure_report_days: policy.failureReportDays,
    raw_input_days: policy.rawInputDays,
    aggregate_days: policy.aggregateDays,
    redaction: policy.redaction ? "on" : "off",
  };
}

function daysField(ctx: ApiContext, name: string): number | undefined {
  const value = optionalField(ctx, name);
  if (value === undefined) return undefined;
  const days = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(days) || days < retentionDays.min || days > retentionDays.max) {
    throw badParameter(
      name,
      `must be a whole number of days from ${retentionDays.min} to ${retentionDays.max}.`,
    );
  }
  return days;
}

export const personalDataPolicyEndpoint: Endpoint = {
  name: "personal_data_policy",
  method: "GET",
  scope: "read",
  summary:
    "How long your personal data (failure reports, raw inputs) and your aggregate facts are kept, and whether /forensic redacts it.",
  handler: async (ctx) => {
    const policy = await personalDataPolicy(ctx.deps.db, ctx.state.holder!.tenantId);
    ctx.body = { status: "SUCCESS", ...policyBody(policy) };
  },
};

const policyFields = ["failure_report_days", "raw_input_days", "aggregate_days", "redaction"];

export const setPersonalDataPolicyEndpoint: Endpoint = {
  name: "update_personal_data_policy",
  method: "PUT",
  scope: "write",
  summary:
    "Sets retention in days (failure_report_days, raw_input_days; aggregate_days, or `keep` to keep the aggregate facts) and redaction (`on`/`off`); fields left out stay. Facts past aggregate_days go at the next retention run.",
  handler: async (ctx) => {
    const holder = ctx.state.holder!;
    // A body that sets nothing is a mistake (an empty form, a field misspelt and refused apart).
    if (policyFields.every((field) => optionalField(ctx, field) === undefined))
      throw new ApiError(400, "invalid_body", `Give at least one of ${policyFields.join(", ")}.`);
    const current = await personalDataPolicy(ctx.deps.db, holder.tenantId);
    const aggregate = optionalField(ctx, "aggregate_days");
    const redaction = optionalField(ctx, "redaction");
    if (redaction !== undefined && redaction !== "on" && redaction !== "off") {
      throw badParameter("redaction", "must be on or off.");
    }
    const next: PersonalDataPolicy = {
      failureReportDays: daysField(ctx, "failure_report_days") ?? current.failureReportDays,
      rawInputDays: daysField(ctx, "raw_input_days") ?? current.rawInputDays,
      aggregateDays:
        aggregate === undefined
          ? current.aggregateDays
          : aggregate === "keep"
            ? null
            : (daysField(ctx, "aggregate_days") as number),
      redaction: redaction === undefined ? current.redaction : redaction === "on",
    };
    try {
      const { position } = await setPersonalDataPolicy(ctx.deps.store, holder.tenantId, next, {
        causedBy: holder.causedBy,
        correlationId: ctx.state.requestId,
      });
      await awaitProjection(ctx, position);
    } catch (error) {
      if (error instanceof InvalidPolicyError) throw badParameter("policy", error.message);
      throw error;
    }
    ctx.body = { status: "SUCCESS", ...policyBody(next) };
  },
};

/**
 * Erasure on request, by an admin of the tenant signed in to the dashboard (keys cannot): the
 * query's `confirm` must repeat the tenant's id. At once, what eraseTenant removes; answers what
 * was removed once /forensic no longer shows it.
 */
export const erasePersonalDataEndpoint: Endpoint = {
  name: "personal_data",
  method: "DELETE",
  scope: "admin",
  summary:
    "Erases everything of your tenant that can identify a person (failure reports' personal fields, raw inputs' bytes, its people: everyone is signed out), for good; you come back as a fresh admin with a one-time set-password link. Query confirm=<your tenant id>.",
  handler: async (ctx) => {
    const holder = ctx.state.holder!;
    const confirm = typeof ctx.query.confirm === "string" ? ctx.query.confirm : undefined;
    if (confirm !== holder.tenantId) {
      throw badParameter(
        "confirm",
        "must be your tenant's id: erasure removes your failure reports' personal data and your raw inputs' bytes for good.",
      );
    }
    const { eraseTenant } = await import("@dmarc-ledger/runtime/personal-data");
    const metadata = { causedBy: holder.causedBy, correlationId: ctx.state.requestId };
    // The admin who asked stays the tenant's way in: every person goes (their keys shredded,
    // everyone signed out), then this one comes back as a fresh account with a one-time link.
    const userId = holder.session?.session.userId;
    const requester = userId
      ? (await userEmails(usersDb(ctx), peopleKeys(ctx), [userId])).get(userId)
      : undefined;
    const { event, position: erasedAt } = await eraseTenant(ctx.deps, holder.tenantId, metadata);
    const admin = requester
      ? await addUser(
          ctx.deps.store,
          usersDb(ctx),
          peopleKeys(ctx),
          {
            tenantId: holder.tenantId,
            email: requester,
            role: "admin",
            linkTtlMs: ctx.deps.users.passwordLinkTtlMs,
          },
          metadata,
        )
      : null;
    const position = admin?.position ?? erasedAt;
    await awaitProjection(ctx, position);
    sessionCookie.clear(ctx);
    ctx.body = {
      status: "SUCCESS",
      keys_shredded: event.keysShredded,
      failure_reports: event.removed.failureReports,
      raw_inputs: event.removed.rawInputs,
      people: event.removed.users,
      admin: admin
        ? {
            email: admin.email,
            set_password_url: setPasswordUrl(ctx.deps.config.dashboardUrl, admin.link),
            expires_at: admin.link.expiresAt.toISOString(),
          }
        : null,
    };
  },
};
