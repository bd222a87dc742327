import { alertProjections } from "@dmarc-ledger/alerts/projections";
import { eventFeedProjection } from "@dmarc-ledger/event-feed";
import { personalDataPolicyProjection } from "@dmarc-ledger/personal-data";
import type { Projection } from "@dmarc-ledger/projection-engine";
import { reportProjections } from "@dmarc-ledger/report-read-models";
import { safeSpfProjections } from "@dmarc-ledger/safe-spf-service/projections";
import { tenancyProjections } from "@dmarc-ledger/tenancy";
import { usersProjections } from "@dmarc-ledger/users/projection";

/**
 * Every projection of the service, each package's own, in the order the engine applies them:
 * what the projector runs, what replay rebuilds and what a write waits for. A package that adds
 * projections adds them here, and its migrations to tableMigrations (migration-sets.ts).
 */
export const allProjections: readonly Projection[] = [
  ...tenancyProjections,
  ...reportProjections,
  ...safeSpfProjections,
  ...usersProjections,
  ...(alertProjections as readonly Projection[]),
  personalDataPolicyProjection,
  // The events feed's index (issue 44).
  eventFeedProjection as Projection,
];
