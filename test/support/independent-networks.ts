import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import ipaddr from "ipaddr.js";
import maxmind, { type CountryResponse } from "maxmind";

const require = createRequire(import.meta.url);

/** What the by-source records show of an address's network: AS, its organisation, country. */
export interface NetworkFields {
  ASN: string;
  ASNOrganization: string;
  Country: string;
}

const noNetwork: NetworkFields = { ASN: "", ASNOrganization: "", Country: "" };

interface AsRange {
  low: bigint;
  high: bigint;
  asn: string;
  organization: string;
}

const addressValue = (ip: string) =>
  ipaddr
    .parse(ip)
    .toByteArray()
    .reduce((value, byte) => (value << 8n) | BigInt(byte), 0n);

/** The database's dotted-address file (the service reads the integer one), ranges in order. */
function asRanges(file: string): AsRange[] {
  const dir = dirname(require.resolve("@ip-location-db/asn/package.json"));
  const ranges: AsRange[] = [];
  for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
    const [first, last, asn, ...rest] = line.split(",");
    if (!first || !last || !asn) continue;
    const organization = rest.join(",");
    ranges.push({
      low: addressValue(first),
      high: addressValue(last),
      asn,
      organization: organization.startsWith('"')
        ? organization.slice(1, -1).replaceAll('""', '"')
        : organization,
    });
  }
  return ranges.sort((a, b) => (a.low < b.low ? -1 : a.low > b.low ? 1 : 0));
}

function find(ranges: AsRange[], value: bigint): AsRange | null {
  let low = 0;
  let high = ranges.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const range = ranges[middle]!;
    if (value < range.low) high = middle - 1;
    else if (value > range.high) low = middle + 1;
    else return range;
  }
  return null;
}

/**
 * The AS and country the shipped databases give each address, read by other paths than the
 * service's (the dotted-address CSV, maxmind's file reader); a special-purpose address (private,
 * documentation, loopback…: anything ipaddr.js does not call `unicast`) is on no network.
 */
export async function independentNetworks(addresses: Iterable<string>): Promise<Map<string, NetworkFields>> {
  const v4 = asRanges("asn-ipv4.csv");
  const v6 = asRanges("asn-ipv6.csv");
  const countries = await maxmind.open<CountryResponse & { country_code?: string }>(
    join(
      dirname(require.resolve("@ip-location-db/geo-whois-asn-country-mmdb/package.json")),
      "geo-whois-asn-country.mmdb",
    ),
  );
  const found = new Map<string, NetworkFields>();
  for (const ip of addresses) {
    const parsed = ipaddr.process(ip);
    if (parsed.range() !== "unicast") {
      found.set(ip, noNetwork);
      continue;
    }
    const as = find(parsed.kind() === "ipv4" ? v4 : v6, addressValue(parsed.toString()));
    found.set(ip, {
      ASN: as?.asn ?? "",
      ASNOrganization: as?.organization ?? "",
      Country: countries.get(ip)?.country_code ?? "",
    });
  }
  return found;
}
