import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { parse } from "csv-parse/sync";

/** The service behind a sending server, named by the base domain of its reverse-DNS name. */
export interface SenderService {
  name: string;
  type: string;
}

/** A deployment's own services (SENDER_SERVICE_MAP_FILE), added to or overriding the shipped map. */
export interface ServiceMapFile {
  path: string;
  /** Base domain, lower-case, to its service. */
  services: Map<string, SenderService>;
  /** The first 16 hex digits of the file's SHA-256: recorded with every name it gave. */
  sha256: string;
}

export class ServiceMapFileError extends Error {
  override readonly name = "ServiceMapFileError";
}

const baseDomainPattern = /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)+[a-z0-9-]{2,63}$/;

/**
 * Reads a service map in the shipped map's format: a CSV file with the header
 * `base_reverse_dns,name,type`, one service per base domain. Every problem is named with its line.
 */
export function readServiceMapFile(path: string): ServiceMapFile {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new ServiceMapFileError(`cannot read ${path}: ${(error as Error).message}`);
  }
  let rows: string[][];
  try {
    rows = parse(bytes, { skip_empty_lines: true, trim: true, relax_column_count: true });
  } catch (error) {
    throw new ServiceMapFileError(`${path} is not CSV: ${(error as Error).message}`);
  }
  const header = rows[0]?.map((cell) => cell.toLowerCase()).join(",");
  if (header !== "base_reverse_dns,name,type") {
    throw new ServiceMapFileError(`${path}: the first line must be "base_reverse_dns,name,type"`);
  }
  const problems: string[] = [];
  const services = new Map<string, SenderService>();
  for (const [index, row] of rows.slice(1).entries()) {
    const line = index + 2;
    const [domain = "", name = "", type = ""] = row.map((cell) => cell.trim());
    const base = domain.toLowerCase().replace(/\.$/, "");
    if (row.length !== 3) problems.push(`line ${line}: ${row.length} columns, not 3`);
    else if (!baseDomainPattern.test(base)) problems.push(`line ${line}: "${domain}" is not a domain name`);
    else if (!name || !type) problems.push(`line ${line}: a service needs a name and a type`);
    else if (name.length > 200 || type.length > 100) problems.push(`line ${line}: name or type too long`);
    else if (services.has(base)) problems.push(`line ${line}: ${base} is listed twice`);
    else services.set(base, { name, type });
    if (problems.length >= 10) break;
  }
  if (problems.length > 0) throw new ServiceMapFileError(`${path}: ${problems.join("; ")}`);
  return { path, services, sha256: createHash("sha256").update(bytes).digest("hex").slice(0, 16) };
}
