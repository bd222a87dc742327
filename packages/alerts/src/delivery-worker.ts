import type { EventStore } from "@dmarc-ledger/event-store";
import type { DataKeys } from "@dmarc-ledger/personal-data";
import type { Selectable } from "kysely";
import { type Kysely, sql } from "kysely";
import { retryDelay } from "./backoff.js";
import type { AlertsSchema, WebhookDeliveryTable } from "./schema.js";
import { pauseEndpoint } from "./webhook-commands.js";
import { webhookSecretBox } from "./webhook-secrets.js";
import { type SendLimits, sendWebhook } from "./webhook-sender.js";

export interface DeliveryWorkerOptions {
  store: EventStore;
  db: Kysely<AlertsSchema>;
  /** Opens the endpoints' signing secrets (sealed: webhook-secrets.ts). */
  keys: DataKeys;
  limits: SendLimits;
  concurrency: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /**
   * How long an endpoint may fail without a success (counted from its last change or resume)
   * before it is paused: its deliveries are then kept until it is resumed (WEBHOOK_PAUSE_AFTER).
   */
  pauseAfterMs: number;
  pollMs?: number;
  /** The clock (tests move it rather than wait a day). */
  now?: () => Date;
  onError?: (error: unknown) => void;
}

export interface RunningDeliveryWorker {
  /** Looks for due deliveries now rather than at the next poll. */
  wake(): void;
  stop(): Promise<void>;
}

type Delivery = Selectable<WebhookDeliveryTable>;

/**
 * Sends the due webhook deliveries, up to `concurrency` at once. A delivery is leased while its
 * attempt runs (FOR UPDATE SKIP LOCKED, so two workers never take the same one); a worker killed
 * mid-attempt leaves the lease to run out, and the delivery is tried again with the same
 * webhook-id: at least once, and a receiver tells repeats apart by that id.
 */
export function startDeliveryWorker(options: DeliveryWorkerOptions): RunningDeliveryWorker {
  const { db } = options;
  const clock = options.now ?? (() => new Date());
  const pollMs = options.pollMs ?? 250;
  // Longer than an attempt can take (its timeout bounds it), with room for the update after it.
  const leaseMs = options.limits.timeoutMs + 5000;
  const inFlight = new Set<Promise<void>>();
  let stopping = false;
  let wakeUp: (() => void) | null = null;
  let woken = false;

  const attempt = async (delivery: Delivery) => {
    const endpoint = await db
      .selectFrom("webhook_endpoint as e")
      .innerJoin("webhook_secret as s", "s.endpoint_id", "e.endpoint_id")
      .select(["e.url", "e.enabled", "e.paused_at", "e.updated_at", "s.secret"])
      .where("e.endpoint_id", "=", delivery.endpoint_id)
      .executeTakeFirst();
    if (!endpoint?.enabled) {
      await db
        .updateTable("webhook_delivery")
        .set({ status: "endpoint_disabled", lease_until: null })
        .where("delivery_id", "=", delivery.delivery_id)
        .execute();
      return;
    }
    if (endpoint.paused_at !== null) {
      // Paused since it was claimed: kept for when it is resumed.
      await db
        .updateTable("webhook_delivery")
        .set({ lease_until: null })
        .where("delivery_id", "=", delivery.delivery_id)
        .execute();
      return;
    }
    const secret = await webhookSecretBox(options.keys).open(db, delivery.endpoint_id, endpoint.secret);
    const outcome = await sendWebhook(
      endpoint.url,
      secret,
      { id: delivery.alert_id, body: delivery.body },
      options.limits,
    );
    const now = clock();
    const attempts = delivery.attempts + 1;
    const firstAttempt = delivery.first_attempt_at ?? now;
    const failing = await recordHealth(delivery.endpoint_id, outcome.error, now);
    if (outcome.ok) {
      await db
        .updateTable("webhook_delivery")
        .set({
          status: "delivered",
          attempts,
          first_attempt_at: firstAttempt,
          last_attempt_at: now,
          last_status: outcome.status,
          last_error: null,
          delivered_at: now,
          lease_until: null,
        })
        .where("delivery_id", "=", delivery.delivery_id)
        .execute();
      return;
    }
    // No success for too long (counted from its last change or resume, so that turning it on
    // again gives it the whole time): paused, its deliveries kept, until someone resumes it.
    const failingFrom = failing
      ? Math.max(failing.since.getTime(), new Date(endpoint.updated_at).getTime())
      : now.getTime();
    await db
      .updateTable("webhook_delivery")
      .set({
        attempts,
        first_attempt_at: firstAttempt,
        last_attempt_at: now,
        last_status: outcome.status,
        last_error: outcome.error,
        next_attempt_at: new Date(
          now.getTime() + retryDelay(attempts, options.retryBaseMs, options.retryMaxMs),
        ),
        lease_until: null,
      })
      .where("delivery_id", "=", delivery.delivery_id)
      .execute();
    if (now.getTime() - failingFrom >= options.pauseAfterMs) {
      const seconds = Math.round((now.getTime() - failingFrom) / 1000);
      const howLong =
        seconds >= 3600
          ? `${Math.round(seconds / 3600)} h`
          : seconds >= 60
            ? `${Math.round(seconds / 60)} min`
            : `${seconds} s`;
      await pauseEndpoint(
        options.store,
        db,
        {
          tenantId: delivery.tenant_id,
          endpointId: delivery.endpoint_id,
          reason: `no delivery succeeded for ${howLong} (${failing?.failures ?? attempts} attempts in a row failed; last: ${outcome.error})`,
          failingSince: new Date(failingFrom),
          lastSuccessAt: failing?.lastSuccess ?? null,
        },
        { causedBy: "process:alerts" },
        now,
      );
    }
  };

  /**
   * An attempt's outcome on its endpoint's health: a success clears the failing state; a failure
   * counts, and holds the endpoint's whole queue for a backoff that doubles with the failures in a
   * row (not each delivery on its own), so a dead endpoint with thousands pending costs one attempt
   * per backoff. Returns since when the endpoint has been failing and its last success (null: it
   * is not failing).
   */
  const recordHealth = async (endpointId: string, failure: string | null, now: Date) => {
    await sql`insert into webhook_endpoint_health (endpoint_id) values (${endpointId})
      on conflict (endpoint_id) do nothing`.execute(db);
    const set =
      failure === null
        ? sql`last_success_at = ${now}, failing_since = null, failures = 0, retry_at = null`
        : sql`last_failure_at = ${now}, last_failure = ${failure},
            failing_since = coalesce(failing_since, ${now}), failures = failures + 1,
            retry_at = ${now}::timestamptz + make_interval(secs => least(${options.retryMaxMs}::float8,
              ${options.retryBaseMs}::float8 * power(2, least(failures, 30))) / 1000.0)`;
    const { rows } = await sql<{
      failing_since: Date | string | null;
      failures: number;
      last_success_at: Date | string | null;
    }>`
      update webhook_endpoint_health set ${set} where endpoint_id = ${endpointId}
      returning failing_since, failures, last_success_at`.execute(db);
    const row = rows[0];
    return row?.failing_since
      ? {
          since: new Date(row.failing_since),
          failures: row.failures,
          lastSuccess: row.last_success_at ? new Date(row.last_success_at) : null,
        }
      : null;
  };

  /**
   * Each endpoint is its own queue, its oldest due deliveries first, with its own share of the
   * attempts: up to perEndpoint in flight while it succeeds, one (a probe) while it fails, none
   * while it waits out its backoff (retry_at) or is paused (its deliveries kept for its resume). The queues' heads are taken oldest first, so a
   * failing endpoint never holds another's deliveries, and a healthy busy one leaves room too.
   */
  const perEndpoint = Math.max(1, Math.floor(options.concurrency / 4));
  const claim = async (limit: number): Promise<Delivery[]> => {
    const now = clock();
    const result = await sql<Delivery>`
      update webhook_delivery set lease_until = ${new Date(now.getTime() + leaseMs)}
      where delivery_id in (
        select head.delivery_id
        from (
          select e.endpoint_id,
            (case when h.failing_since is null then ${perEndpoint}::int else 1 end) - (
              select count(*)::int from webhook_delivery busy
              where busy.endpoint_id = e.endpoint_id and busy.status = 'pending'
                and busy.lease_until >= ${now}) as room
          from (select distinct endpoint_id from webhook_delivery where status = 'pending') e
          left join webhook_endpoint_health h on h.endpoint_id = e.endpoint_id
          left join webhook_endpoint paused on paused.endpoint_id = e.endpoint_id
          where (h.retry_at is null or h.retry_at <= ${now}) and paused.paused_at is null
        ) queue
        cross join lateral (
          select delivery_id, next_attempt_at from webhook_delivery d
          where d.endpoint_id = queue.endpoint_id and d.status = 'pending'
            and d.next_attempt_at <= ${now} and (d.lease_until is null or d.lease_until < ${now})
          order by d.next_attempt_at
          limit greatest(queue.room, 0)
        ) head
        order by head.next_attempt_at
        limit ${limit}
      )
      and (lease_until is null or lease_until < ${now})
      returning *`.execute(db);
    return result.rows.map((row) => ({
      ...row,
      next_attempt_at: new Date(row.next_attempt_at),
      first_attempt_at: row.first_attempt_at === null ? null : new Date(row.first_attempt_at),
    }));
  };

  const loop = (async () => {
    while (!stopping) {
      let claimed: Delivery[] = [];
      const room = options.concurrency - inFlight.size;
      if (room > 0) {
        try {
          claimed = await claim(room);
        } catch (error) {
          options.onError?.(error);
        }
      }
      for (const delivery of claimed) {
        const running: Promise<void> = attempt(delivery)
          .catch((error) => options.onError?.(error))
          .finally(() => {
            inFlight.delete(running);
            wakeUp?.();
          });
        inFlight.add(running);
      }
      if (claimed.length === room && room > 0) continue;
      if (woken) {
        woken = false;
        continue;
      }
      // A stop that came during the claim found no pause to cut short.
      if (stopping) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = null;
    }
  })();

  return {
    wake() {
      woken = true;
      wakeUp?.();
    },
    async stop() {
      stopping = true;
      wakeUp?.();
      await loop;
      await Promise.allSettled([...inFlight]);
    },
  };
}
