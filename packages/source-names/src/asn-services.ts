/**
 * The ASes that carry one mail service's mail, each to the base domain of that service in the
 * service map (which gives its name and type). Built from public data: the AS numbers and their
 * organisations from @ip-location-db/asn (RouteViews, NRO), each the operator's own AS for its
 * sending platform, as the operator's published sending ranges show (SendGrid, Mailchimp,
 * SparkPost, Mailjet, Brevo, Proofpoint, Mimecast, Fastmail, Google's mail ASes). An AS that also
 * hosts others' machines (Amazon's 16509, Microsoft's 8075, Google Cloud's 396982) names no
 * service: its organisation names the source instead.
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

/** Says which table named a service: recorded with the map's version in every naming. */
export const asnServicesVersion = "asn-services-1";
