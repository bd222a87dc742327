import { DnsLookupError, type SpfResolver } from "@dmarc-ledger/safe-spf";
import { getDomain } from "tldts";
import { isDmarcRecord, mailtoDomain, readDmarcRecord } from "./dmarc-record.js";
import { walkSpf } from "./spf-reach.js";
import { isTlsRptRecord, readTlsRptRecord } from "./tlsrpt-record.js";

/** RFC 7208 §4.6.4: an evaluation that needs more lookups is a permerror. */
export const spfLookupLimit = 10;

export interface DomainStatusProblem {
  code: string;
  /** One sentence: what to change. */
  message: string;
}

export interface DomainStatus {
  domain: string;
  dmarc: {
    name: string;
    /** The organisational domain whose record applies, when the domain has none of its own. */
    inherited_from: string | null;
    /** The record as served, when there is exactly one. */
    record: string | null;
    present: boolean;
    valid: boolean;
    error: string | null;
    policy: string | null;
    subdomain_policy: string | null;
    pct: number | null;
    rua: string[];
    ruf: string[];
    /** null while this deployment has no reports domain configured. */
    rua_points_here: boolean | null;
    ruf_points_here: boolean | null;
  };
  authorization: {
    /** `<domain>._report._dmarc.<reports domain>`; null without a reports domain. */
    name: string | null;
    /** Whether it serves a TXT record starting with v=DMARC1, as receivers check (RFC 7489 §7.1). */
    served: boolean | null;
  };
  spf: {
    record: string | null;
    present: boolean;
    /** `<domain>.<SAFE_SPF_ZONE>`; null while no zone is configured. */
    safe_spf_root: string | null;
    reaches_safe_spf_root: boolean | null;
    via: "include" | "redirect" | null;
    lookups: number;
    errors: string[];
  };
  /**
   * The domain's TLS-RPT record (RFC 8460 §3), which tells senders where to send SMTP TLS reports.
   * Optional: a missing one, or one sending reports elsewhere, is advice (`publish`), no problem.
   */
  tls_rpt: {
    /** `_smtp._tls.<domain>`. */
    name: string;
    record: string | null;
    present: boolean;
    valid: boolean;
    error: string | null;
    rua: string[];
    /** null while this deployment has no reports domain configured. */
    rua_points_here: boolean | null;
    /** The record to publish (or add our address to) so that TLS reports come here; null when they do. */
    publish: string | null;
  };
  problems: DomainStatusProblem[];
}

export interface DomainStatusOptions {
  resolver: SpfResolver;
  /** The domain our report mailboxes are at (REPORTS_DOMAIN); null when not configured. */
  reportsDomain: string | null;
  /** The zone Safe SPF records are published under (SAFE_SPF_ZONE); null when not configured. */
  safeSpfZone: string | null;
}

const describe = (error: unknown) => (error instanceof DnsLookupError ? error.code : "error");

async function txt(resolver: SpfResolver, name: string): Promise<{ values: string[] } | { error: string }> {
  try {
    return { values: (await resolver.lookup(name, "TXT")).values };
  } catch (error) {
    return { error: describe(error) };
  }
}

/**
 * Whether a domain is set up to send its reports here, from live DNS: its DMARC record and where
 * its reports go, our authorisation record for it, and whether its SPF record reaches its Safe
 * SPF root within the lookup limit. Every problem comes with the one change that fixes it.
 */
export async function checkDomainStatus(domain: string, options: DomainStatusOptions): Promise<DomainStatus> {
  const { resolver } = options;
  const reportsDomain = options.reportsDomain?.toLowerCase().replace(/\.$/, "") ?? null;
  const zone = options.safeSpfZone?.toLowerCase().replace(/\.$/, "") ?? null;
  const problems: DomainStatusProblem[] = [];
  const problem = (code: string, message: string) => problems.push({ code, message });
  const ourAddress = reportsDomain ? `mailto:<address>@${reportsDomain}` : null;
  const root = zone ? `${domain}.${zone}` : null;

  // A subdomain without a DMARC record of its own is under its organisational domain's
  // (RFC 7489 §6.6.3): receivers then send its reports where that record says.
  const findDmarc = async () => {
    const own = await txt(resolver, `_dmarc.${domain}`);
    const organizational = getDomain(domain);
    if (!("values" in own) || own.values.some(isDmarcRecord) || !organizational || organizational === domain)
      return { answer: own, policyDomain: domain };
    const inherited = await txt(resolver, `_dmarc.${organizational}`);
    return "values" in inherited && inherited.values.some(isDmarcRecord)
      ? { answer: inherited, policyDomain: organizational }
      : { answer: own, policyDomain: domain };
  };
  const tlsRptName = `_smtp._tls.${domain}`;
  const [{ answer: dmarcAnswer, policyDomain }, spf, tlsRptAnswer] = await Promise.all([
    findDmarc(),
    walkSpf(resolver, domain, root),
    txt(resolver, tlsRptName),
  ]);
  const dmarcName = `_dmarc.${policyDomain}`;
  // Receivers ask for the authorisation of the domain whose record names us (RFC 7489 §7.1).
  const authorizationName = reportsDomain ? `${policyDomain}._report._dmarc.${reportsDomain}` : null;
  const authorizationAnswer = authorizationName ? await txt(resolver, authorizationName) : null;

  // DMARC record.
  const dmarcRecords = "values" in dmarcAnswer ? dmarcAnswer.values.filter(isDmarcRecord) : [];
  const reading = dmarcRecords.length === 1 ? readDmarcRecord(dmarcRecords[0]!) : null;
  const pointsHere = (uris: string[]) =>
    reportsDomain === null ? null : uris.some((uri) => mailtoDomain(uri) === reportsDomain);
  const dmarc: DomainStatus["dmarc"] = {
    name: dmarcName,
    inherited_from: policyDomain === domain ? null : policyDomain,
    record: dmarcRecords.length === 1 ? dmarcRecords[0]! : null,
    present: dmarcRecords.length > 0,
    valid: reading?.valid ?? false,
    error: reading?.error ?? null,
    policy: reading?.policy ?? null,
    subdomain_policy: reading?.subdomainPolicy ?? null,
    pct: reading?.pct ?? null,
    rua: reading?.rua ?? [],
    ruf: reading?.ruf ?? [],
    rua_points_here: pointsHere(reading?.rua ?? []),
    ruf_points_here: pointsHere(reading?.ruf ?? []),
  };
  const suggested = `v=DMARC1; p=none; rua=${ourAddress ?? "mailto:<address>@<reports domain>"}`;
  if ("error" in dmarcAnswer) {
    dmarc.error = `the TXT records of ${dmarcName} could not be read (${dmarcAnswer.error})`;
    problem("dmarc_unreadable", `Check the DNS of ${domain}: ${dmarc.error}; then run the check again.`);
  } else if (dmarcRecords.length === 0) {
    problem("dmarc_missing", `Publish a TXT record at ${dmarcName}: "${suggested}".`);
  } else if (dmarcRecords.length > 1) {
    dmarc.error = `${dmarcName} has ${dmarcRecords.length} DMARC records, and receivers then ignore them all`;
    problem("dmarc_several", `Keep exactly one of the ${dmarcRecords.length} DMARC records at ${dmarcName}.`);
  } else if (!reading!.valid) {
    problem("dmarc_invalid", `Fix the DMARC record at ${dmarcName}: ${reading!.error}.`);
  }
  if (reading && dmarc.rua_points_here === false) {
    problem(
      "rua_elsewhere",
      `Add ${ourAddress} to the rua tag of ${dmarcName}${dmarc.rua.length ? " (other addresses may stay)" : ""}.`,
    );
  }

  // Our authorisation record: without it receivers do not send reports to another domain.
  let served: boolean | null = null;
  if (authorizationAnswer !== null) {
    if ("error" in authorizationAnswer) {
      problem(
        "authorization_unreadable",
        `Check the delegation of _report._dmarc.${reportsDomain} to our DNS servers: ${authorizationName} could not be read (${authorizationAnswer.error}).`,
      );
    } else {
      served = authorizationAnswer.values.some(isDmarcRecord);
      if (!served) {
        problem(
          "authorization_missing",
          `Receivers will not send reports for ${domain} to ${reportsDomain} until ${authorizationName} serves "v=DMARC1": check that ${domain} is added to your account and that ${reportsDomain} is delegated to our DNS servers.`,
        );
      }
    }
  }

  // SPF and the Safe SPF root.
  const fix = root ? `"v=spf1 redirect=${root}"` : null;
  if (spf.records === 0 && spf.errors.length === 0) {
    problem("spf_missing", `Publish a TXT record at ${domain}: ${fix ?? '"v=spf1 … -all"'}.`);
  } else if (spf.records > 1) {
    problem(
      "spf_several",
      `Keep exactly one of the ${spf.records} SPF records at ${domain}${fix ? `: ${fix}` : ""}.`,
    );
  } else if (root && spf.record && !spf.reachesRoot) {
    problem(
      "spf_not_safe_spf",
      `Replace the SPF record of ${domain} with ${fix} (or add include:${root} before its "all"), after sending it with PUT update_safe_spf.`,
    );
  }
  for (const error of spf.errors) problem("spf_unreadable", `Fix the SPF tree of ${domain}: ${error}.`);
  if (spf.lookups > spfLookupLimit) {
    problem(
      "spf_too_many_lookups",
      `The SPF record of ${domain} needs ${spf.lookups} DNS lookups and receivers fail it above ${spfLookupLimit}: ${
        fix ? `replace it with ${fix}, whose records are flattened` : "flatten it"
      }.`,
    );
  }

  // TLS-RPT: where senders send SMTP TLS reports (RFC 8460 §3). Not inherited from a parent.
  const tlsRptRecords = "values" in tlsRptAnswer ? tlsRptAnswer.values.filter(isTlsRptRecord) : [];
  const tlsReading = tlsRptRecords.length === 1 ? readTlsRptRecord(tlsRptRecords[0]!) : null;
  const tlsRptPointsHere = pointsHere(tlsReading?.rua ?? []);
  const tlsRpt: DomainStatus["tls_rpt"] = {
    name: tlsRptName,
    record: tlsRptRecords.length === 1 ? tlsRptRecords[0]! : null,
    present: tlsRptRecords.length > 0,
    valid: tlsReading?.valid ?? false,
    error: tlsReading?.error ?? null,
    rua: tlsReading?.rua ?? [],
    rua_points_here: tlsRptPointsHere,
    publish:
      tlsRptPointsHere === true
        ? null
        : `v=TLSRPTv1; rua=${[ourAddress ?? "mailto:<address>@<reports domain>", ...(tlsReading?.valid ? tlsReading.rua : [])].join(",")}`,
  };
  if ("error" in tlsRptAnswer) {
    tlsRpt.error = `the TXT records of ${tlsRptName} could not be read (${tlsRptAnswer.error})`;
    problem("tlsrpt_unreadable", `Check the DNS of ${domain}: ${tlsRpt.error}; then run the check again.`);
  } else if (tlsRptRecords.length > 1) {
    tlsRpt.error = `${tlsRptName} has ${tlsRptRecords.length} TLS-RPT records, and senders then use none`;
    problem("tlsrpt_several", `Keep exactly one TLS-RPT record at ${tlsRptName}: "${tlsRpt.publish}".`);
  } else if (tlsReading && !tlsReading.valid) {
    problem(
      "tlsrpt_invalid",
      `Fix the TLS-RPT record at ${tlsRptName} (${tlsReading.error}): "${tlsRpt.publish}".`,
    );
  }

  return {
    domain,
    dmarc,
    authorization: { name: authorizationName, served },
    spf: {
      record: spf.record,
      present: spf.records > 0,
      safe_spf_root: root,
      reaches_safe_spf_root: root ? spf.reachesRoot : null,
      via: spf.via,
      lookups: spf.lookups,
      errors: spf.errors,
    },
    tls_rpt: tlsRpt,
    problems,
  };
}
