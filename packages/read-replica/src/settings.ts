import { ConfigError, integer, url } from "@dmarc-ledger/config";

/** The API's reads from a streaming replica (docs/scaling.md). */
export const readReplicaSettings = {
  /** A streaming replica of DATABASE_URL's server: list endpoints read it. Unset: they read the primary. */
  DATABASE_REPLICA_URL: url(["postgres", "postgresql"]),
  /**
   * How long a read waits for the replica to replay its caller's last write before it reads the
   * primary instead.
   */
  REPLICA_WAIT_MS: integer({ min: 0, max: 60_000, default: 1000 }),
};

/**
 * A replica is of a PostgreSQL primary: DATABASE_REPLICA_URL without DATABASE_URL (the embedded
 * database has none) is a ConfigError, named with the others at start.
 */
export function replicaNeedsPrimary(env: NodeJS.ProcessEnv): void {
  if (env.DATABASE_REPLICA_URL && !env.DATABASE_URL)
    throw new ConfigError([
      {
        variable: "DATABASE_REPLICA_URL",
        message: "is a replica of DATABASE_URL's server: set DATABASE_URL (the primary) too",
      },
    ]);
}
