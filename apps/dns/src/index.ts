export { answerQuery } from "./answer-query.js";
export { type DnsServerOptions, type RunningDnsServer, startDnsServer } from "./dns-server.js";
export { authorizationName, PublishedRecords } from "./published-records.js";
export { type DnsSettings, dnsSettingsFromEnv, dnsSettingsShape } from "./settings.js";
export { type DnsAppOptions, type RunningDnsApp, startDnsApp } from "./start-dns-app.js";
export { Zone } from "./zone.js";
