import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import ipaddr from "ipaddr.js";
import { type CountryResponse, Reader } from "maxmind";
import { type AsnAnswer, AsnTable } from "./asn-table.js";

/** Offline ASN and country of an address, and the versions of the databases that said so. */
export interface NetworkDatabases {
  /** e.g. `@ip-location-db/asn@2.3.2026061719`. */
  asnVersion: string;
  countryVersion: string;
  asnOf(ip: string): AsnAnswer | null;
  /** ISO 3166-1 alpha-2, upper-case; null when unknown. */
  countryOf(ip: string): string | null;
}

const require = createRequire(import.meta.url);

/** The directory and version of an installed database package. */
function installed(name: string): { dir: string; version: string } {
  const manifest = require.resolve(`${name}/package.json`);
  const { version } = require(manifest) as { version: string };
  return { dir: dirname(manifest), version: `${name}@${version}` };
}

function installedDatabases() {
  return {
    asn: installed("@ip-location-db/asn"),
    country: installed("@ip-location-db/geo-whois-asn-country-mmdb"),
  };
}

/** The databases' versions, from their manifests: what a naming records, known without opening them. */
export function networkDatabaseVersions(): Pick<NetworkDatabases, "asnVersion" | "countryVersion"> {
  const { asn, country } = installedDatabases();
  return { asnVersion: asn.version, countryVersion: country.version };
}

/** The address in the form the databases index: an IPv4-mapped IPv6 address is its IPv4 one. */
function parsed(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (!ipaddr.isValid(ip)) return null;
  return ipaddr.process(ip);
}

/**
 * Opens the databases installed from npm: @ip-location-db/asn (CC BY 4.0: RouteViews, NRO, DB-IP)
 * and @ip-location-db/geo-whois-asn-country-mmdb (CC0), read with maxmind. Done once per process:
 * it reads about 40 MB of files, in about half a second of one core spread over many turns of the
 * event loop, and keeps what docs/limits.md says.
 */
export async function openNetworkDatabases(): Promise<NetworkDatabases> {
  const { asn, country } = installedDatabases();
  const v4 = await AsnTable.read(join(asn.dir, "asn-ipv4-num.csv"), "ipv4");
  const v6 = await AsnTable.read(join(asn.dir, "asn-ipv6-num.csv"), "ipv6");
  const countries = new Reader<CountryResponse & { country_code?: string }>(
    await readFile(join(country.dir, "geo-whois-asn-country.mmdb")),
  );
  return {
    ...networkDatabaseVersions(),
    asnOf(ip) {
      const address = parsed(ip);
      if (!address) return null;
      return address.kind() === "ipv4" ? v4.lookup(address) : v6.lookup(address);
    },
    countryOf(ip) {
      const address = parsed(ip);
      if (!address) return null;
      const code = countries.get(address.toString())?.country_code;
      return typeof code === "string" && /^[A-Za-z]{2}$/.test(code) ? code.toUpperCase() : null;
    },
  };
}
