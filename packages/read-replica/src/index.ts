export { readReplicaMigrations } from "./migrations/index.js";
export {
  markWrite,
  openReadReplica,
  type ReadReplica,
  type ReadRoute,
  type ReplicaLag,
  replicaLag,
  routeRead,
} from "./read-replica.js";
export { readReplicaSettings, replicaNeedsPrimary } from "./settings.js";
