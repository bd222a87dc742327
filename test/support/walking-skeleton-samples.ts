import { aggregateCorpus } from "./corpus.js";

/**
 * Three parsedmarc samples, each one row of one message for example.com, and what the API says of
 * them together, whichever channel brought them:
 * - addisonfoods (begin 1536105600): policy dkim=fail spf=fail; auth_results dkim pass
 *   (toptierhighticket.club), no spf result.
 * - example.net (begin 1529366400): policy dkim=fail spf=fail; auth_results empty.
 * - veeam (begin 1530133200, exactly 24 h long, so it keeps its begin): policy dkim=fail
 *   spf=fail; auth_results spf result none.
 */
export const walkingSkeletonSamples = {
  addison: `${aggregateCorpus}addisonfoods.com!example.com!1536105600!1536191999.xml`,
  exampleNet: `${aggregateCorpus}example.net!example.com!1529366400!1529452799.xml`,
  veeam: `${aggregateCorpus}veeam.com!example.com!1530133200!1530219600.xml`,
};

/**
 * aggregate_by_domain over all three, by the contract's counter rules: no row is DMARC pass (both
 * policy results fail), one message has a passing DKIM auth result, none a passing SPF one.
 */
export const walkingSkeletonExpected = {
  Domain: "example.com",
  Volume: "3",
  DMARC: "0",
  DMARCUnaligned: "3",
  DMARCUnalignedARCPass: "0",
  DKIMAligned: "0",
  DKIM: "1",
  DKIMFailed: "2",
  SPFAligned: "0",
  SPF: "0",
  SPFFailed: "3",
};
