import type { findDomain } from "@dmarc-ledger/tenancy";
import { CliError } from "../io.js";

const day = 86_400;

/** The options every report-listing command (`senders`, `tls`) takes beside its tenant. */
export interface ReportQueryOptions {
  domain?: string;
  start?: string;
  end?: string;
  limit: string;
  json?: boolean;
}

/** A period option: a UTC date (YYYY-MM-DD) or Unix seconds. */
export function seconds(name: string, value: string | undefined, fallback: number, endOfDay = false): number {
  if (value === undefined) return fallback;
  if (/^\d+$/.test(value)) return Number(value);
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Number.NaN;
  if (Number.isNaN(date))
    throw new CliError(`--${name} takes a date (YYYY-MM-DD) or Unix seconds, not "${value}".`);
  return date / 1000 + (endOfDay ? day - 1 : 0);
}

/**
 * `--limit`, `--start` and `--end` checked before anything is opened: the period defaults to the
 * 30 days before `--end` (now), as the API's list endpoints do.
 */
export function reportPeriod(options: ReportQueryOptions): { limit: number; start: number; end: number } {
  const limit = Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    throw new CliError(`--limit takes a whole number from 1 to 1000, not "${options.limit}".`);
  }
  const end = seconds("end", options.end, Math.floor(Date.now() / 1000), true);
  const start = seconds("start", options.start, Math.max(0, end - 30 * day));
  if (start > end) throw new CliError("--start is after --end.");
  return { limit, start, end };
}

/** `--domain`, normalised, when it is one of the tenant's domains; refused otherwise. */
export async function tenantDomainOption(
  db: Parameters<typeof findDomain>[0],
  tenantId: string,
  domainOption: string | undefined,
): Promise<{ domain?: string }> {
  if (domainOption === undefined) return {};
  const tenancy = await import("@dmarc-ledger/tenancy");
  const domain = tenancy.normaliseDomain(domainOption);
  if ((await tenancy.findDomain(db, domain))?.tenantId !== tenantId) {
    throw new CliError(`${domain} is not one of the tenant's domains.`);
  }
  return { domain };
}
