export {
  type FixtureDnsServer,
  type FixtureDnsServerOptions,
  type FixtureQuery,
  type FixtureRecord,
  type FixtureZones,
  startFixtureDnsServer,
} from "./fixture-dns-server.js";
export { providerZones } from "./provider-zones.js";
