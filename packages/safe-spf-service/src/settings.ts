import { hostPorts, integer } from "@dmarc-ledger/config";
import { z } from "zod";

const domainName = /^(?=.{1,253}$)([A-Za-z0-9_]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}\.?$/;

function zoneName() {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      if (!domainName.test(value)) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not a domain name such as spf.example.net` });
        return z.NEVER;
      }
      return value.replace(/\.$/, "");
    });
}

/** What the Safe SPF process reads: compose into the settings shape of the process that runs it. */
export const safeSpfSettings = {
  /** "host[:port],…": the nameservers the Safe SPF process asks; unset means the system's. */
  DNS_NAMESERVERS: hostPorts(53),
  DNS_TIMEOUT_MS: integer({ min: 1, max: 60_000, default: 2000 }),
  SAFE_SPF_ZONE: zoneName(),
};

export interface SafeSpfSettings {
  DNS_NAMESERVERS: string[] | null;
  DNS_TIMEOUT_MS: number;
  SAFE_SPF_ZONE: string | undefined;
}

// The refresher's own variables (SAFE_SPF_MIN_REFRESH, SAFE_SPF_MAX_REFRESH), on the same light path.
export {
  duration,
  type SafeSpfRefreshSettings,
  safeSpfRefreshSettingsFromEnv,
  safeSpfRefreshSettingsShape,
} from "./refresh-settings.js";
