import ipaddr from "ipaddr.js";

/**
 * The ASes that carry one mail service's mail, each to the base domain of that service in the
 * service map (which gives its name and type). Built from public data: the AS numbers and their
 * organisations from @ip-location-db/asn (RouteViews, NRO), each the operator's own AS for its
 * sending platform, as the operator's published sending ranges show (SendGrid, Mailchimp,
 * SparkPost, Mailjet, Brevo, Proofpoint, Mimecast, Fastmail, Google's mail ASes). An AS that also
 * hosts others' machines (Amazon's 16509, Microsoft's 8075, Google Cloud's 396982) names no
 * service by itself: its organisation names the source, unless the address is in one of the
 * sending ranges below.
 */
export const asnServiceDomains: ReadonlyMap<number, string> = new Map([
  [11377, "sendgrid.net"], // SendGrid, Inc.
  [14782, "mcsv.net"], // MailChimp (The Rocket Science Group)
  [23528, "sparkpostmail.com"], // Sparkpost
  [200069, "mailjet.com"], // MAILJET SAS
  [200484, "sendinblue.com"], // Sendinblue SAS
  [13916, "pphosted.com"], // Proofpoint, Inc.
  [22843, "pphosted.com"], // Proofpoint, Inc.
  [208638, "mimecast.com"], // Mimecast Services Limited
  [151847, "fastmail.com"], // Fastmail
  [15169, "google.com"], // Google LLC: Gmail's and Google Workspace's outbound ranges
]);

/**
 * Sending ranges a mail service publishes as its own outbound, inside an AS that also hosts
 * others' machines, each to the base domain of that service in the map. Microsoft 365 (Exchange
 * Online Protection) and Outlook.com send from AS8075, which Azure shares, so no AS names them:
 * these are the ip4 and ip6 ranges of Microsoft's published SPF record spf.protection.outlook.com
 * (the one Microsoft tells its customers to include), every one of them in AS8075 by
 * @ip-location-db/asn. In the map, outlook.com is "Outlook (Personal and Microsoft 365)".
 */
export const sendingRanges: readonly [cidr: string, baseDomain: string][] = [
  ["40.92.0.0/15", "outlook.com"],
  ["40.107.0.0/16", "outlook.com"],
  ["52.100.0.0/15", "outlook.com"],
  ["52.102.0.0/16", "outlook.com"],
  ["52.103.0.0/16", "outlook.com"],
  ["104.47.0.0/17", "outlook.com"],
  ["2a01:111:f400::/48", "outlook.com"],
  ["2a01:111:f403::/49", "outlook.com"],
  ["2a01:111:f403:8000::/51", "outlook.com"],
  ["2a01:111:f403:c000::/51", "outlook.com"],
  ["2a01:111:f403:f000::/52", "outlook.com"],
];

const parsedRanges = sendingRanges.map(([cidr, baseDomain]) => ({
  range: ipaddr.parseCIDR(cidr),
  baseDomain,
}));

/** The base domain of the service whose published sending range holds `ip`, or null. */
export function sendingRangeServiceDomain(ip: string): string | null {
  if (!ipaddr.isValid(ip)) return null;
  const address = ipaddr.process(ip);
  for (const { range, baseDomain } of parsedRanges) {
    if (address.kind() === range[0].kind() && address.match(range)) return baseDomain;
  }
  return null;
}

/** Says which tables named a service (ASes and sending ranges): recorded with the map's version in every naming. */
export const asnServicesVersion = "asn-services-2";
