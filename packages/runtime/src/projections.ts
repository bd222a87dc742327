import { allProjections, type Projection, projectionOfPackage } from "@dmarc-ledger/read-models";
import { usersProjection } from "@dmarc-ledger/users/projection";

/**
 * Every projection a service runs: the read models' and those of the packages that own tables of
 * their own (the users'). Processes that project, wait for projections or replay use this list.
 */
export const serviceProjections: readonly Projection[] = [
  ...allProjections,
  projectionOfPackage(usersProjection),
];
