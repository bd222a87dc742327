import type { FixtureZones } from "./fixture-dns-server.js";

/** Fixture zones modelled on the include trees of real providers (addresses are made up or public blocks). */
export const providerZones: FixtureZones = {
  // Google-like: a root include fanning out to netblock records, v4 and v6.
  "_spf.gmail.test": [
    {
      TXT: "v=spf1 include:_netblocks.gmail.test include:_netblocks2.gmail.test include:_netblocks3.gmail.test ~all",
    },
  ],
  "_netblocks.gmail.test": [
    {
      TXT: "v=spf1 ip4:35.190.247.0/24 ip4:64.233.160.0/19 ip4:66.102.0.0/20 ip4:66.249.80.0/20 ip4:72.14.192.0/18 ip4:74.125.0.0/16 ip4:108.177.8.0/21 ip4:173.194.0.0/16 ip4:209.85.128.0/17 ip4:216.58.192.0/19 ip4:216.239.32.0/19 ~all",
    },
  ],
  "_netblocks2.gmail.test": [
    {
      TXT: "v=spf1 ip6:2001:4860:4000::/36 ip6:2404:6800:4000::/36 ip6:2607:f8b0:4000::/36 ip6:2800:3f0:4000::/36 ip6:2a00:1450:4000::/36 ip6:2c0f:fb50:4000::/36 ~all",
    },
  ],
  "_netblocks3.gmail.test": [
    { TXT: "v=spf1 ip4:172.217.0.0/19 ip4:172.217.32.0/20 ip4:172.217.128.0/19 ip4:172.217.160.0/20 ~all" },
  ],
  // Microsoft-like: nested includes, adjacent blocks that merge, -all at every level.
  "spf.outlook.test": [
    { TXT: "v=spf1 include:spfa.outlook.test include:spfb.outlook.test include:spfc.outlook.test -all" },
  ],
  "spfa.outlook.test": [
    {
      TXT: "v=spf1 ip4:40.92.0.0/16 ip4:40.107.0.0/16 ip4:52.100.0.0/15 ip4:52.102.0.0/16 ip4:104.47.0.0/17 -all",
    },
  ],
  "spfb.outlook.test": [
    { TXT: "v=spf1 ip6:2a01:111:f400::/48 ip6:2a01:111:f403::/49 ip6:2a01:111:f403:8000::/49 -all" },
  ],
  "spfc.outlook.test": [{ TXT: "v=spf1 ip4:52.103.0.0/17 ip4:52.103.128.0/17 ip4:40.92.0.0/17 -all" }],
  // Mailchimp-like: one flat record, plus an mx-based sender.
  "servers.mcsv.test": [
    { TXT: "v=spf1 ip4:205.201.128.0/20 ip4:198.2.128.0/18 ip4:148.105.8.0/21 mx:mcsv.test -all" },
  ],
  "mcsv.test": [{ MX: [10, "mx1.mcsv.test"] }, { MX: [20, "mx2.mcsv.test"] }],
  "mx1.mcsv.test": [{ A: "198.51.100.10" }, { AAAA: "2001:db8:10::1" }],
  "mx2.mcsv.test": [{ A: "198.51.100.11" }],
  // Others used to push a customer past 10 lookups.
  "spf.sendgrid.test": [{ TXT: "v=spf1 ip4:167.89.0.0/17 ip4:208.117.48.0/20 ip4:50.31.32.0/19 -all" }],
  "spf.zendesk.test": [{ TXT: "v=spf1 include:_spf1.zendesk.test include:_spf2.zendesk.test -all" }],
  "_spf1.zendesk.test": [{ TXT: "v=spf1 ip4:192.161.144.0/20 ip4:185.12.80.0/22 ?all" }],
  "_spf2.zendesk.test": [{ TXT: "v=spf1 ip4:188.172.128.0/20 ip6:2001:db8:ee::/48 ?all" }],
};
