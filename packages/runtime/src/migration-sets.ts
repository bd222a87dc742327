import { alertsMigrations } from "@dmarc-ledger/alerts/migrations";
import type { MigrationSet } from "@dmarc-ledger/db";
import { eventFeedMigrations } from "@dmarc-ledger/event-feed/migrations";
// The subpaths, not the indexes: those would load the report parser, DNS and more for a list.
import { intakeMigrations } from "@dmarc-ledger/intake/migrations";
import { personalDataMigrations } from "@dmarc-ledger/personal-data/migrations";
import { projectionEngineMigrations } from "@dmarc-ledger/projection-engine/migrations";
import { rateLimitMigrations } from "@dmarc-ledger/rate-limits/migrations";
import { readReplicaMigrations } from "@dmarc-ledger/read-replica/migrations";
import { reportReadModelMigrations } from "@dmarc-ledger/report-read-models/migrations";
import { safeSpfMigrations } from "@dmarc-ledger/safe-spf-service/migrations";
import { tenancyMigrations } from "@dmarc-ledger/tenancy/migrations";
import { usersMigrations } from "@dmarc-ledger/users/migrations";

/**
 * The migration sets of every package that owns tables in the service's database, whichever
 * store holds the events (the event store's own set is added when it does): the engine's
 * checkpoints, the tables of the projections in projections.ts, Safe SPF's schedule, the
 * intake's raw archive, the users' secrets and sessions, the data keys of personal data, the
 * API's shared rate limits and its callers' write marks (reads from a replica), and the
 * alerts' (rules, endpoints, the evaluator's state and the outboxes). Each set has its own
 * bookkeeping table; openRuntime migrates them all.
 */
export const tableMigrations: readonly MigrationSet[] = [
  projectionEngineMigrations,
  tenancyMigrations,
  reportReadModelMigrations,
  safeSpfMigrations,
  intakeMigrations,
  usersMigrations,
  alertsMigrations,
  rateLimitMigrations,
  readReplicaMigrations,
  personalDataMigrations,
  eventFeedMigrations,
];
