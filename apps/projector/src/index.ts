export { rankingMaintenanceFromEnv, startRankingMaintenance } from "./ranking-maintenance.js";
export { runProjector } from "./run-projector.js";
