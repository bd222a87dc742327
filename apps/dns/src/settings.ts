import { ConfigError, integer, parseSettings, port, type SettingProblem } from "@dmarc-ledger/config";
import { z } from "zod";

const hostnamePattern =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

function isHostname(value: string): boolean {
  return hostnamePattern.test(value);
}

/** A domain name (lower-cased, trailing dot dropped); undefined when unset. */
function hostname() {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const name = value.trim().toLowerCase().replace(/\.$/, "");
      if (!isHostname(name)) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not a domain name` });
        return z.NEVER;
      }
      return name;
    });
}

function hostnames() {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return undefined;
      const names = value
        .split(",")
        .map((name) => name.trim().toLowerCase().replace(/\.$/, ""))
        .filter(Boolean);
      const wrong = names.filter((name) => !isHostname(name));
      if (names.length === 0 || wrong.length > 0) {
        ctx.addIssue({ code: "custom", message: `"${value}" is not a comma-separated list of domain names` });
        return z.NEVER;
      }
      return names;
    });
}

/** `10 mx1.example.com,20 mx2.example.com` */
function mxList() {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return [];
      const entries = value
        .split(",")
        .map((entry) => entry.trim())
        .filter(Boolean)
        .map((entry) => /^(\d{1,5})\s+(\S+)$/.exec(entry));
      const parsed = entries.map((match) =>
        match && Number(match[1]) <= 65535 && isHostname(match[2]!.toLowerCase().replace(/\.$/, ""))
          ? { preference: Number(match[1]), exchange: match[2]!.toLowerCase().replace(/\.$/, "") }
          : null,
      );
      if (parsed.length === 0 || parsed.some((entry) => entry === null)) {
        ctx.addIssue({
          code: "custom",
          message: `"${value}" is not a list like "10 mx1.example.com,20 mx2.example.com"`,
        });
        return z.NEVER;
      }
      return parsed as { preference: number; exchange: string }[];
    });
}

function host() {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return "0.0.0.0";
      if (!/^[0-9.]+$|^[0-9a-f:]+$/i.test(value) && value !== "localhost") {
        ctx.addIssue({ code: "custom", message: `"${value}" is not an IP address to listen on` });
        return z.NEVER;
      }
      return value;
    });
}

/** The variables of the DNS server. `defaultPort`: 53 for apps/dns, 5353 inside `dmarc-ledger start`. */
export function dnsSettingsShape(defaultPort: number) {
  return {
    DNS_HOST: host(),
    DNS_PORT: port(defaultPort),
    SAFE_SPF_ZONE: hostname(),
    REPORTS_DOMAIN: hostname(),
    DNS_NS_NAMES: hostnames(),
    DNS_SOA_MAILBOX: hostname(),
    DNS_REPORTS_MX: mxList(),
    DNS_RECORD_TTL: integer({ min: 1, max: 86_400, default: 300 }),
    DNS_NEGATIVE_TTL: integer({ min: 0, max: 86_400, default: 60 }),
    DNS_UDP_MAX_PAYLOAD: integer({ min: 512, max: 4096, default: 1232 }),
    DNS_TCP_MAX_CONNECTIONS: integer({ min: 1, max: 100_000, default: 256 }),
    /** Of those, from one address (an IPv6 address by its /64): at most DNS_TCP_MAX_CONNECTIONS. */
    DNS_TCP_MAX_CONNECTIONS_PER_IP: integer({ min: 1, max: 100_000, default: 16 }),
    DNS_TCP_IDLE_TIMEOUT_MS: integer({ min: 100, max: 600_000, default: 10_000 }),
  };
}

export interface DnsSettings {
  host: string;
  port: number;
  safeSpfZone: string;
  reportsDomain: string | null;
  nameServers: string[];
  /** The SOA's RNAME: the zone administrator's mailbox written as a name. */
  soaMailbox: string;
  reportsMx: { preference: number; exchange: string }[];
  recordTtl: number;
  negativeTtl: number;
  maxUdpPayload: number;
  tcpMaxConnections: number;
  tcpMaxConnectionsPerIp: number;
  tcpIdleTimeoutMs: number;
}

/**
 * Reads and checks the DNS server's variables; throws ConfigError naming each wrong one. Returns
 * null when SAFE_SPF_ZONE is unset and `required` is false (`dmarc-ledger start` then runs no DNS
 * server: there is no zone to serve).
 */
export function dnsSettingsFromEnv(
  env: NodeJS.ProcessEnv,
  options: { defaultPort: number; required: boolean },
): DnsSettings | null {
  const raw = parseSettings(dnsSettingsShape(options.defaultPort), env);
  if (!raw.SAFE_SPF_ZONE) {
    if (!options.required) return null;
    throw new ConfigError([
      {
        variable: "SAFE_SPF_ZONE",
        message: "is required: the zone the Safe SPF records are published under",
      },
    ]);
  }
  const problems: SettingProblem[] = [];
  if (raw.DNS_TCP_MAX_CONNECTIONS_PER_IP > raw.DNS_TCP_MAX_CONNECTIONS) {
    problems.push({
      variable: "DNS_TCP_MAX_CONNECTIONS_PER_IP",
      message: `${raw.DNS_TCP_MAX_CONNECTIONS_PER_IP} is more than DNS_TCP_MAX_CONNECTIONS (${raw.DNS_TCP_MAX_CONNECTIONS})`,
    });
  }
  if (raw.DNS_REPORTS_MX.length > 0 && !raw.REPORTS_DOMAIN) {
    problems.push({
      variable: "DNS_REPORTS_MX",
      message: "needs REPORTS_DOMAIN, the domain the MX records are for",
    });
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    host: raw.DNS_HOST,
    port: raw.DNS_PORT,
    safeSpfZone: raw.SAFE_SPF_ZONE,
    reportsDomain: raw.REPORTS_DOMAIN ?? null,
    nameServers: raw.DNS_NS_NAMES ?? [`ns1.${raw.SAFE_SPF_ZONE}`],
    soaMailbox: raw.DNS_SOA_MAILBOX ?? `hostmaster.${raw.SAFE_SPF_ZONE}`,
    reportsMx: raw.DNS_REPORTS_MX,
    recordTtl: raw.DNS_RECORD_TTL,
    negativeTtl: raw.DNS_NEGATIVE_TTL,
    maxUdpPayload: raw.DNS_UDP_MAX_PAYLOAD,
    tcpMaxConnections: raw.DNS_TCP_MAX_CONNECTIONS,
    tcpMaxConnectionsPerIp: raw.DNS_TCP_MAX_CONNECTIONS_PER_IP,
    tcpIdleTimeoutMs: raw.DNS_TCP_IDLE_TIMEOUT_MS,
  };
}
