export { claimExistingDomains, type ExistingDomainClaims } from "./claim-existing-domains.js";
export {
  rankingMaintenanceFrom,
  rankingMaintenanceFromEnv,
  startRankingMaintenance,
} from "./ranking-maintenance.js";
export { type RunningProjectorApp, runProjector } from "./run-projector.js";
export { type ProjectorSettings, projectorSettings } from "./settings.js";
export { type ProjectorAppOptions, startProjectorApp } from "./start-projector-app.js";
