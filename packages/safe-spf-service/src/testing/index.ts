export { seedComputedDomains } from "./seed-computed-domains.js";
