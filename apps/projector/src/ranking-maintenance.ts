import { parseSettings } from "@dmarc-ledger/config";
import {
  maintainSenderRankings,
  maintainSourceRankings,
  maintainTenantDayTotals,
  type RankingMaintenanceOptions,
  type ReportAndTenancySchema,
} from "@dmarc-ledger/report-read-models";
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import { type ProjectorSettings, projectorSettings } from "./settings.js";

export interface RankingMaintenance {
  stop(): Promise<void>;
}

/**
 * Keeps the by-source and the sender rankings and the tenants' day totals fresh in the background: every `intervalMs` it
 * builds the missing ones and refreshes those whose facts changed. Answers are exact either way;
 * fresh rankings keep them fast.
 */
export function startRankingMaintenance(options: {
  db: Kysely<ReportAndTenancySchema>;
  logger: Logger;
  intervalMs: number;
  rankings?: RankingMaintenanceOptions;
}): RankingMaintenance {
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();

  const run = async () => {
    try {
      const built = await maintainSourceRankings(options.db, options.rankings);
      for (const ranking of built) {
        options.logger.info(
          {
            tenantId: ranking.tenantId,
            scope: ranking.scope,
            kind: ranking.kind,
            bucket: ranking.bucket,
            groups: ranking.groups,
          },
          `${ranking.outcome === "built" ? "built" : "caught up"} a source ranking in ${Math.round(ranking.ms)} ms`,
        );
      }
    } catch (error) {
      if (!stopped)
        options.logger.error({ err: error }, "building source rankings failed; trying again later");
    }
    try {
      for (const kept of await maintainTenantDayTotals(options.db))
        options.logger.debug(
          kept,
          `${kept.outcome === "built" ? "built" : "caught up"} a tenant's day totals`,
        );
    } catch (error) {
      if (!stopped) options.logger.error({ err: error }, "keeping the day totals failed; trying again later");
    }
    try {
      const senders = await maintainSenderRankings(options.db, {
        minFacts: options.rankings?.minFacts,
        statementTimeoutMs: options.rankings?.statementTimeoutMs,
      });
      for (const ranking of senders) {
        options.logger.info(
          {
            tenantId: ranking.tenantId,
            bucket: ranking.bucket,
            groups: ranking.groups,
            addresses: ranking.addresses,
            reason: ranking.reason,
          },
          `${ranking.outcome} a sender ranking${ranking.ms === undefined ? "" : ` in ${Math.round(ranking.ms)} ms`}`,
        );
      }
    } catch (error) {
      if (!stopped)
        options.logger.error({ err: error }, "building sender rankings failed; trying again later");
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = run().then(schedule);
    }, options.intervalMs);
  };
  schedule();

  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}

/** RANKING_INTERVAL_MS (default 60 s) and RANKING_MIN_FACTS (default 20,000); ConfigError when wrong. */
export function rankingMaintenanceFromEnv(env: NodeJS.ProcessEnv): {
  intervalMs: number;
  rankings: RankingMaintenanceOptions;
} {
  return rankingMaintenanceFrom(parseSettings(projectorSettings, env));
}

export function rankingMaintenanceFrom(settings: ProjectorSettings): {
  intervalMs: number;
  rankings: RankingMaintenanceOptions;
} {
  return {
    intervalMs: settings.RANKING_INTERVAL_MS,
    rankings: {
      minFacts: settings.RANKING_MIN_FACTS,
      statementTimeoutMs: settings.RANKING_STATEMENT_TIMEOUT_MS,
    },
  };
}
