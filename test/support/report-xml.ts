/** One row of a test report: a source and its message count; everything passes unless told. */
export interface XmlRow {
  sourceIp: string;
  count: number;
  disposition?: string;
  dkim?: string;
  spf?: string;
}

/**
 * A DMARC aggregate report as a receiver sends it (RFC 7489 XML), for tests that go through the
 * intake (upload, SMTP, import) rather than appending events.
 */
export function aggregateReportXml(report: {
  reportId: string;
  domain: string;
  organization: string;
  begin: number;
  end: number;
  rows: readonly XmlRow[];
}): string {
  const rows = report.rows
    .map(
      (row) =>
        `<record><row><source_ip>${row.sourceIp}</source_ip><count>${row.count}</count>` +
        `<policy_evaluated><disposition>${row.disposition ?? "none"}</disposition>` +
        `<dkim>${row.dkim ?? "pass"}</dkim><spf>${row.spf ?? "pass"}</spf></policy_evaluated></row>` +
        `<identifiers><header_from>${report.domain}</header_from></identifiers>` +
        `<auth_results><spf><domain>${report.domain}</domain><result>${row.spf ?? "pass"}</result></spf>` +
        "</auth_results></record>",
    )
    .join("");
  return (
    `<?xml version="1.0"?><feedback><report_metadata><org_name>${report.organization}</org_name>` +
    `<email>dmarc@${report.organization}</email><report_id>${report.reportId}</report_id>` +
    `<date_range><begin>${report.begin}</begin><end>${report.end}</end></date_range></report_metadata>` +
    `<policy_published><domain>${report.domain}</domain><p>none</p></policy_published>${rows}</feedback>`
  );
}
