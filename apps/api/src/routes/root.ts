import type { Endpoint } from "../endpoints.js";
import type { ApiContext } from "../state.js";

/** GET /api/: the region and one absolute link per endpoint ("the root links to all other resources"). */
export function rootHandler(endpoints: readonly Endpoint[]) {
  return async (ctx: ApiContext) => {
    const base = ctx.deps.config.publicBaseUrl;
    const links: Record<string, string> = {};
    for (const endpoint of endpoints) links[endpoint.name] = new URL(endpoint.name, base).toString();
    links.openapi = new URL("openapi.json", base).toString();
    ctx.body = { status: "SUCCESS", region: ctx.deps.config.region, links };
  };
}
