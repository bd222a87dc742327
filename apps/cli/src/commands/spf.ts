import { getServers } from "node:dns";
import type { FlattenResult, SpfResolver } from "@dmarc-ledger/safe-spf";
import { Command } from "commander";

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

async function resolverFor(nameserver: string | undefined): Promise<SpfResolver> {
  const nameservers = nameserver
    ? [nameserver]
    : getServers().map((server) => (server.includes(":") ? `[${server}]` : server));
  return (await safeSpf()).createResolver({ nameservers });
}

/** `spf check`: the check_host() verdict, as printed. */
export async function runSpfCheck(domain: string, options: SpfCheckOptions): Promise<string> {
  const sender = options.sender ?? `postmaster@${domain}`;
  const { checkHost } = await safeSpf();
  const verdict = await checkHost(options.ip, domain, sender, {
    resolver: await resolverFor(options.nameserver),
    helo: options.helo,
  });
  const lines = [
    `${verdict.result}: ${options.ip} for ${sender} at ${domain}`,
    `lookups: ${verdict.lookups}, void lookups: ${verdict.voidLookups}`,
  ];
  if (verdict.reason) lines.push(`reason: ${verdict.reason}`);
  if (verdict.explanation) lines.push(`explanation: ${verdict.explanation}`);
  return lines.join("\n");
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
export async function runSpfFlatten(domain: string, options: SpfFlattenOptions): Promise<string> {
  const { flattenSpf } = await safeSpf();
  const result = await flattenSpf({
    domain,
    record: options.record,
    resolver: await resolverFor(options.nameserver),
    publishZone: options.publishZone,
  });
  return options.json ? JSON.stringify(result, null, 2) : describeFlattening(result);
}

/** Errors a user can act on are printed; anything else is a bug and propagates. */
async function printed(run: () => Promise<string>): Promise<{ text: string; failed: boolean }> {
  const { DnsLookupError, SpfFlattenError } = await safeSpf();
  try {
    return { text: await run(), failed: false };
  } catch (error) {
    if (error instanceof SpfFlattenError)
      return { text: `error (${error.code}): ${error.message}`, failed: true };
    if (error instanceof DnsLookupError || error instanceof TypeError) {
      return { text: `error: ${error.message}`, failed: true };
    }
    throw error;
  }
}

export interface SpfCommandOutput {
  write(text: string): void;
  /** Called after printing an error the user can act on. */
  fail(): void;
}

const processOutput: SpfCommandOutput = {
  write: (text) => process.stdout.write(text),
  fail: () => {
    process.exitCode = 1;
  },
};

export function registerSpfCommands(program: Command, output: SpfCommandOutput = processOutput): void {
  const spf = program.command("spf").description("SPF evaluation and Safe SPF flattening");
  const report = (outcome: { text: string; failed: boolean }) => {
    output.write(`${outcome.text}\n`);
    if (outcome.failed) output.fail();
  };
  spf
    .command("check")
    .description("evaluate a domain's SPF record for a client IP (RFC 7208 check_host)")
    .argument("<domain>")
    .requiredOption("--ip <ip>", "client IP address")
    .option("--sender <address>", "MAIL FROM address (default postmaster@DOMAIN)")
    .option("--helo <name>", "HELO/EHLO name")
    .option("--nameserver <host:port>", "DNS server to ask (default: the system's)")
    .action(async (domain: string, options: SpfCheckOptions) =>
      report(await printed(() => runSpfCheck(domain, options))),
    );
  spf
    .command("flatten")
    .description("flatten a domain's SPF record into the set of records Safe SPF publishes")
    .argument("<domain>")
    .option("--record <text>", 'the original record instead of the domain\'s TXT ("v=spf1 …")')
    .option("--nameserver <host:port>", "DNS server to ask (default: the system's)")
    .option("--publish-zone <zone>", "zone the records are published under")
    .option("--json", "print the whole result as JSON")
    .action(async (domain: string, options: SpfFlattenOptions) =>
      report(await printed(() => runSpfFlatten(domain, options))),
    );
}

/** Runs `spf …` arguments as the CLI would and returns what it prints (for tests and scripts). */
export async function runSpfCommand(args: string[]): Promise<string> {
  let output = "";
  const program = new Command().exitOverride();
  program.configureOutput({ writeOut: (text) => (output += text), writeErr: (text) => (output += text) });
  registerSpfCommands(program, { write: (text) => (output += text), fail: () => {} });
  await program.parseAsync(["spf", ...args], { from: "user" });
  return output.trimEnd();
}
