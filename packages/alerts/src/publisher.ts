import { type EventStore, WrongExpectedVersionError } from "@dmarc-ledger/event-store";
import { type AlertRaised, newEvent, streams } from "@dmarc-ledger/events";
import type { ProjectionCheckpointSchema } from "@dmarc-ledger/projection-engine";
import { type UsersSchema, usersProjection } from "@dmarc-ledger/users";
import { type Kysely, sql } from "kysely";
import { webhookEndpointsProjection } from "./alert-projections.js";
import { tenantRule } from "./rules.js";
import type { AlertsSchema } from "./schema.js";
import { endpointWants, webhookBody } from "./webhook-payload.js";

/**
 * Records each decided alert as an AlertRaised event and queues its deliveries: one per enabled
 * endpoint of the tenant that takes its rule (paused ones too: they keep it for their resume), one
 * e-mail per person of the tenant when the rule says so (a webhook's notice: per admin). Every step is safe to do again (the event is appended with "no stream" to the alert's
 * own stream; the deliveries have ids of alert and endpoint or person), and the outbox row is
 * marked published in the transaction that queues the deliveries, so a crash anywhere repeats
 * at most what is already idempotent. Returns how many alerts it published.
 *
 * `mail` says whether a relay is configured: without one no mail is queued at all. A queued mail
 * names its person, never their address (docs/privacy.md, "People").
 */
export async function publishAlerts(
  store: EventStore,
  db: Kysely<AlertsSchema>,
  mail: boolean,
  limit = 200,
  parallel = 8,
): Promise<number> {
  const reached = await readModelsReached(db);
  const rows = await db
    .selectFrom("alert_outbox")
    .selectAll()
    .where("published", "=", false)
    .where("after_position", "<=", reached.toString())
    .orderBy("created_at")
    .orderBy("alert_id")
    .limit(limit)
    .execute();
  // Alerts are independent of each other: several at once, each step still idempotent.
  let next = 0;
  const publishOne = async (row: (typeof rows)[number]) => {
    const alert = JSON.parse(row.payload) as AlertRaised;
    try {
      await store.append(
        streams.alert(alert.alertId),
        [
          newEvent("AlertRaised", alert, {
            causedBy: "process:alerts",
            correlationId: alert.alertId,
            occurredAt: row.created_at.toISOString(),
          }),
        ],
        "no_stream",
      );
    } catch (error) {
      if (!(error instanceof WrongExpectedVersionError)) throw error;
    }
    await fanOut(db, mail, alert, row.created_at);
  };
  await Promise.all(
    Array.from({ length: Math.min(parallel, rows.length) }, async () => {
      while (next < rows.length) await publishOne(rows[next++]!);
    }),
  );
  return rows.length;
}

/** How far both read models the fan-out reads (endpoints, people) have come; -1 before either started. */
async function readModelsReached(db: Kysely<AlertsSchema>): Promise<bigint> {
  const handle = db as unknown as Kysely<ProjectionCheckpointSchema>;
  const rows = await handle
    .selectFrom("projection_checkpoint")
    .select(sql<string>`position::text`.as("position"))
    .where("projection", "in", fanOutReads)
    .execute();
  if (rows.length < fanOutReads.length) return -1n;
  return rows.reduce(
    (lowest, row) => (BigInt(row.position) < lowest ? BigInt(row.position) : lowest),
    BigInt(rows[0]!.position),
  );
}

const fanOutReads = [webhookEndpointsProjection.name, usersProjection.name];

async function fanOut(
  db: Kysely<AlertsSchema>,
  mail: boolean,
  alert: AlertRaised,
  raisedAt: Date,
): Promise<void> {
  const endpoints = await db
    .selectFrom("webhook_endpoint")
    .select(["endpoint_id", "alert_types"])
    .where("tenant_id", "=", alert.tenantId)
    .where("enabled", "=", true)
    .execute();
  const wanted = endpoints.filter((endpoint) => endpointWants(JSON.parse(endpoint.alert_types), alert.rule));
  const rule = await tenantRule(db, alert.tenantId, alert.rule);
  // The tenant's people by id: the mail worker opens an address when it sends, and drops the mail
  // of a person who has gone by then.
  // A webhook's pause is the admins' to act on (they resume it): only they get its mail.
  const people =
    mail && rule.params.email === 1
      ? await (db as unknown as Kysely<UsersSchema>)
          .selectFrom("user_role")
          .select("user_id as userId")
          .where("tenant_id", "=", alert.tenantId)
          .$if(alert.rule === "webhook_disabled", (query) => query.where("role", "=", "admin"))
          .execute()
      : [];
  const body = webhookBody(alert, raisedAt);
  const now = new Date();
  await db.transaction().execute(async (trx) => {
    if (wanted.length > 0) {
      await trx
        .insertInto("webhook_delivery")
        .values(
          wanted.map((endpoint) => ({
            delivery_id: `${alert.alertId}.${endpoint.endpoint_id}`,
            alert_id: alert.alertId,
            endpoint_id: endpoint.endpoint_id,
            tenant_id: alert.tenantId,
            body,
            status: "pending",
            attempts: 0,
            next_attempt_at: now,
            created_at: now,
          })),
        )
        .onConflict((oc) => oc.column("delivery_id").doNothing())
        .execute();
    }
    if (people.length > 0) {
      await trx
        .insertInto("alert_email")
        .values(
          people.map((person) => ({
            email_id: `${alert.alertId}.${person.userId}`,
            alert_id: alert.alertId,
            tenant_id: alert.tenantId,
            user_id: person.userId,
            status: "pending",
            attempts: 0,
            next_attempt_at: now,
          })),
        )
        .onConflict((oc) => oc.column("email_id").doNothing())
        .execute();
    }
    await trx
      .updateTable("alert_outbox")
      .set({ published: true })
      .where("alert_id", "=", alert.alertId)
      .execute();
  });
}
