import { getServers } from "node:dns";
import type { FlattenResult, SpfResolver } from "@dmarc-ledger/safe-spf";
import type { Command } from "commander";
import { CliError, type CliIO } from "../io.js";

/** Loaded when an `spf` command runs: the DNS client is no other command's business. */
const safeSpf = () => import("@dmarc-ledger/safe-spf");

export interface SpfCheckOptions {
  ip: string;
  sender?: string;
  helo?: string;
  nameserver?: string;
}

export interface SpfFlattenOptions {
  record?: string;
  nameserver?: string;
  json?: boolean;
  publishZone?: string;
}

/**
 * The resolver a command asks: `--nameserver`, else DNS_NAMESERVERS (as the service asks), else
 * the system's; DNS_TIMEOUT_MS as the service has it. A wrong variable is a CliError naming it.
 */
async function resolverFor(nameserver: string | undefined, env: NodeJS.ProcessEnv): Promise<NamedResolver> {
  const [{ ConfigError, parseSettings }, { safeSpfSettings }, { createResolver }] = await Promise.all([
    import("@dmarc-ledger/config"),
    import("@dmarc-ledger/safe-spf-service/settings"),
    safeSpf(),
  ]);
  let settings: { DNS_NAMESERVERS: string[] | null; DNS_TIMEOUT_MS: number };
  try {
    const { DNS_NAMESERVERS, DNS_TIMEOUT_MS } = safeSpfSettings;
    settings = parseSettings({ DNS_NAMESERVERS, DNS_TIMEOUT_MS }, env);
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(error.message);
    throw error;
  }
  const nameservers = nameserver
    ? [nameserver]
    : (settings.DNS_NAMESERVERS ??
      getServers().map((server) => (server.includes(":") ? `[${server}]` : server)));
  return {
    resolver: createResolver({ nameservers, timeoutMs: settings.DNS_TIMEOUT_MS }),
    asked: nameserver
      ? "--nameserver"
      : settings.DNS_NAMESERVERS
        ? "DNS_NAMESERVERS"
        : "the system's resolvers",
    nameservers,
  };
}

interface NamedResolver {
  resolver: SpfResolver;
  /** Where the nameservers came from, for a message: "--nameserver", "DNS_NAMESERVERS"… */
  asked: string;
  nameservers: string[];
}

/** `spf check`: the check_host() verdict, as printed, and whether it is a temperror. */
export async function runSpfCheck(
  domain: string,
  options: SpfCheckOptions,
  env: NodeJS.ProcessEnv,
): Promise<{ text: string; temperror: string | null }> {
  const sender = options.sender ?? `postmaster@${domain}`;
  const { checkHost } = await safeSpf();
  const dns = await resolverFor(options.nameserver, env);
  const verdict = await checkHost(options.ip, domain, sender, { resolver: dns.resolver, helo: options.helo });
  const lines = [
    `${verdict.result}: ${options.ip} for ${sender} at ${domain}`,
    `lookups: ${verdict.lookups}, void lookups: ${verdict.voidLookups}`,
  ];
  if (verdict.reason) lines.push(`reason: ${verdict.reason}`);
  if (verdict.explanation) lines.push(`explanation: ${verdict.explanation}`);
  // A temperror is no verdict on the domain: a DNS answer it needed could not be had.
  const temperror =
    verdict.result === "temperror"
      ? `no verdict: a DNS answer the check needed could not be had from ${dns.nameservers.join(", ")} (${dns.asked}); try again, or ask other nameservers`
      : null;
  return { text: lines.join("\n"), temperror };
}

function describeFlattening(result: FlattenResult): string {
  const lines = [
    `domain: ${result.domain}`,
    `original: ${result.original}`,
    `lookups: ${result.lookupsBefore} before, ${result.lookupsAfter} after`,
    "records:",
  ];
  for (const record of result.records) {
    lines.push(
      `  ${record.name} (${record.bytes} bytes)`,
      `    ${record.strings.map((text) => `"${text}"`).join(" ")}`,
    );
  }
  if (result.keptVerbatim.length > 0) lines.push(`kept verbatim: ${result.keptVerbatim.join(" ")}`);
  for (const warning of result.warnings) lines.push(`warning: ${warning}`);
  lines.push(`networks passed: ${result.networks.length}`, `smallest TTL: ${result.minTtl ?? "none"}`);
  return lines.join("\n");
}

/** `spf flatten`: the published set, lookups before and after, and sizes, as printed. */
export async function runSpfFlatten(
  domain: string,
  options: SpfFlattenOptions,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const { flattenSpf } = await safeSpf();
  const result = await flattenSpf({
    domain,
    record: options.record,
    resolver: (await resolverFor(options.nameserver, env)).resolver,
    publishZone: options.publishZone,
  });
  return options.json ? JSON.stringify(result, null, 2) : describeFlattening(result);
}

/**
 * Runs a command's work; errors a user can act on are printed (on stderr) and end it with status
 * 1, anything else is a bug and propagates.
 */
async function orPrintedError<T>(io: CliIO, run: () => Promise<T>): Promise<T> {
  const { DnsLookupError, SpfFlattenError } = await safeSpf();
  try {
    return await run();
  } catch (error) {
    if (error instanceof SpfFlattenError) io.err(`error (${error.code}): ${error.message}`);
    else if (error instanceof DnsLookupError || error instanceof TypeError) io.err(`error: ${error.message}`);
    else throw error;
    // Printed: end with status 1 and nothing more.
    throw new CliError("");
  }
}

export function registerSpfCommands(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  const spf = program.command("spf").description("SPF evaluation and Safe SPF flattening");
  spf
    .command("check")
    .description("evaluate a domain's SPF record for a client IP (RFC 7208 check_host); exit 1 on temperror")
    .argument("<domain>")
    .requiredOption("--ip <ip>", "client IP address")
    .option("--sender <address>", "MAIL FROM address (default postmaster@DOMAIN)")
    .option("--helo <name>", "HELO/EHLO name")
    .option("--nameserver <host:port>", "DNS server to ask (default: DNS_NAMESERVERS, else the system's)")
    .action(async (domain: string, options: SpfCheckOptions) => {
      const { text, temperror } = await orPrintedError(io, () => runSpfCheck(domain, options, env));
      io.out(text);
      if (temperror) throw new CliError(temperror);
    });
  spf
    .command("flatten")
    .description("flatten a domain's SPF record into the set of records Safe SPF publishes")
    .argument("<domain>")
    .option("--record <text>", 'the original record instead of the domain\'s TXT ("v=spf1 …")')
    .option("--nameserver <host:port>", "DNS server to ask (default: DNS_NAMESERVERS, else the system's)")
    .option("--publish-zone <zone>", "zone the records are published under")
    .option("--json", "print the whole result as JSON")
    .action(async (domain: string, options: SpfFlattenOptions) => {
      io.out(await orPrintedError(io, () => runSpfFlatten(domain, options, env)));
    });
}
