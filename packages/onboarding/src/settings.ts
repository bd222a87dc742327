import { hostPorts, integer, parseSettings } from "@dmarc-ledger/config";
import { z } from "zod";

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A host name of ours (lower-cased, without the final dot); null when unset. Not checked against
 * the public suffix list: a test deployment may well use names under .test or .example.
 */
const hostName = () =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return null;
      const name = value.trim().toLowerCase().replace(/\.$/, "");
      const labels = name.split(".");
      if (name.length > 253 || labels.length < 2 || !labels.every((part) => label.test(part))) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not a host name` });
        return z.NEVER;
      }
      return name;
    });

/** The environment variables the onboarding check reads. */
export const onboardingSettingsShape = {
  /** The domain report mailboxes are at: rua=mailto:…@REPORTS_DOMAIN. */
  REPORTS_DOMAIN: hostName(),
  /** The zone Safe SPF records are published under: a domain's root is <domain>.<SAFE_SPF_ZONE>. */
  SAFE_SPF_ZONE: hostName(),
  DNS_NAMESERVERS: hostPorts(53),
  DNS_TIMEOUT_MS: integer({ min: 50, max: 60_000, default: 2_000 }),
};

export interface OnboardingSettings {
  reportsDomain: string | null;
  safeSpfZone: string | null;
  /** null: the system's resolvers. */
  nameservers: string[] | null;
  timeoutMs: number;
}

/** Throws ConfigError naming every wrong variable. */
export function onboardingSettingsFromEnv(env: NodeJS.ProcessEnv): OnboardingSettings {
  const parsed = parseSettings(onboardingSettingsShape, env);
  return {
    reportsDomain: parsed.REPORTS_DOMAIN,
    safeSpfZone: parsed.SAFE_SPF_ZONE,
    nameservers: parsed.DNS_NAMESERVERS,
    timeoutMs: parsed.DNS_TIMEOUT_MS,
  };
}
