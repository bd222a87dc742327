import { findApiKey, hashApiKey, regionOfKey } from "@dmarc-ledger/tenancy";
import type { Next } from "koa";
import { ApiError } from "../api-error.js";
import type { ApiContext } from "../state.js";

const unauthorized = (message: string) =>
  new ApiError(401, "unauthorized", message, { "WWW-Authenticate": 'Bearer realm="dmarc-ledger"' });

/**
 * Finds the key holder. The verdict is kept in the state rather than thrown, so that the rate
 * limiter counts failed attempts too; requireAuthentication raises it.
 */
export async function identify(ctx: ApiContext, next: Next): Promise<void> {
  const header = ctx.get("Authorization");
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) {
    ctx.state.authError = unauthorized("Send your API key as: Authorization: Bearer <key>.");
  } else {
    const key = match[1]!;
    const { region, otherRegionBaseUrl } = ctx.deps.config;
    const keyRegion = regionOfKey(key);
    if (keyRegion && keyRegion !== region) {
      ctx.state.authError = new ApiError(
        421,
        "wrong_region",
        `This key belongs to the ${keyRegion} region; send it to ${otherRegionBaseUrl ?? `the ${keyRegion} API root`}.`,
      );
    } else {
      const holder = keyRegion ? await findApiKey(ctx.deps.db, hashApiKey(key)) : null;
      if (holder) ctx.state.holder = holder;
      else ctx.state.authError = unauthorized("The API key is unknown or revoked.");
    }
  }
  await next();
}

export async function requireAuthentication(ctx: ApiContext, next: Next): Promise<void> {
  if (!ctx.state.holder) throw ctx.state.authError ?? unauthorized("Authentication required.");
  await next();
}
