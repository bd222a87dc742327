import { randomBytes } from "node:crypto";
import { addEndpoint, sealClearWebhookSecrets, webhookSecret } from "@dmarc-ledger/alerts";
import { DataKeys, keyScopes, masterKeysFrom, secretScope } from "@dmarc-ledger/personal-data";
import { openRuntime, type Runtime, runtimeDataKeys } from "@dmarc-ledger/runtime";
import { createTenant } from "@dmarc-ledger/tenancy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markersInDatabase, markersInPostgresFiles } from "../support/marker-scan.js";
import { type Backend, backends } from "../support/service-harness.js";

/**
 * Webhook signing secrets at rest (docs/alerts.md, "Signing"): sealed under a data key the master
 * key wraps, so that neither a dump nor the database's files (WAL included) hold one; an earlier
 * version's secret in clear is sealed at start; `keys rotate` rewraps the key and every secret
 * still opens to what the receiver holds.
 */
describe.each(backends)(
  "webhook secrets on %s: sealed, and kept through a rotation",
  (_name, makeBackend) => {
    let backend: Backend;
    let runtime: Runtime;
    let tenantId: string;
    const meta = { causedBy: "test" };
    const added: { endpointId: string; secret: string }[] = [];
    // An earlier version's secret, in clear: written straight into the table, then sealed.
    const legacy = { endpointId: `whep_${randomBytes(12).toString("hex")}`, secret: "" };
    legacy.secret = `whsec_${randomBytes(32).toString("base64")}`;
    /**
     * The added secrets' key material (the base64 after `whsec_`): what must be in no file. Not the
     * legacy one: this test wrote it in clear itself.
     */
    const markers = () => added.map((endpoint) => endpoint.secret.slice("whsec_".length));

    beforeAll(async () => {
      backend = await makeBackend();
      runtime = await openRuntime(backend.env);
      tenantId = (await createTenant(runtime.store, { name: "secrets", region: "global" }, meta)).tenantId;
    });

    afterAll(async () => {
      await runtime?.close();
      await backend?.cleanup();
    });

    it("keeps each added endpoint's secret sealed, and opens it to the secret answered once", async () => {
      const keys = await runtimeDataKeys(runtime, backend.env);
      for (const path of ["a", "b"]) {
        const endpoint = await addEndpoint(
          runtime.store,
          runtime.db,
          { tenantId, url: `https://8.8.8.8/${path}` },
          meta,
          { allowPrivate: false, keys },
        );
        added.push(endpoint);
      }
      const rows = await runtime.db.selectFrom("webhook_secret").select(["endpoint_id", "secret"]).execute();
      expect(rows).toHaveLength(2);
      for (const endpoint of added) {
        const row = rows.find((r) => r.endpoint_id === endpoint.endpointId)!;
        expect(row.secret.startsWith("sealed:")).toBe(true);
        expect(row.secret).not.toContain(endpoint.secret.slice("whsec_".length));
        expect(await webhookSecret(runtime.db, keys, endpoint.endpointId)).toBe(endpoint.secret);
      }
      // Its key is one retention never goes through (it would shred every secret at once).
      expect(await keyScopes(runtime.db)).not.toContain(secretScope("webhooks"));
      // Bound to its endpoint: one endpoint's sealed secret does not open as another's.
      const [first, second] = rows;
      await runtime.db
        .updateTable("webhook_secret")
        .set({ secret: first!.secret })
        .where("endpoint_id", "=", second!.endpoint_id)
        .execute();
      await expect(webhookSecret(runtime.db, keys, second!.endpoint_id)).rejects.toThrow();
      await runtime.db
        .updateTable("webhook_secret")
        .set({ secret: second!.secret })
        .where("endpoint_id", "=", second!.endpoint_id)
        .execute();
    });

    it("seals a secret an earlier version kept in clear", async () => {
      const keys = await runtimeDataKeys(runtime, backend.env);
      await runtime.db
        .insertInto("webhook_secret")
        .values({ endpoint_id: legacy.endpointId, secret: legacy.secret })
        .execute();
      // Opened as it is until sealed: deliveries go on meanwhile.
      expect(await webhookSecret(runtime.db, keys, legacy.endpointId)).toBe(legacy.secret);
      expect(await sealClearWebhookSecrets(runtime.db, keys)).toBe(1);
      expect(await sealClearWebhookSecrets(runtime.db, keys)).toBe(0);
      const row = await runtime.db
        .selectFrom("webhook_secret")
        .select("secret")
        .where("endpoint_id", "=", legacy.endpointId)
        .executeTakeFirstOrThrow();
      expect(row.secret.startsWith("sealed:")).toBe(true);
      expect(await webhookSecret(runtime.db, keys, legacy.endpointId)).toBe(legacy.secret);
    });

    it("opens every secret after the master key is rotated, with the new key alone", async () => {
      // The master key in use: MASTER_KEY, or the data directory's master.key when embedded.
      const { current } = masterKeysFrom(backend.env, backend.env.DMARC_LEDGER_DATA_DIR ?? null);
      const next = randomBytes(32);
      expect(await new DataKeys({ current: next, previous: current }).rewrapAll(runtime.db)).toBeGreaterThan(
        0,
      );
      const after = new DataKeys({ current: next, previous: null });
      for (const endpoint of [...added, legacy])
        expect(await webhookSecret(runtime.db, after, endpoint.endpointId)).toBe(endpoint.secret);
      // The old master key alone no longer opens them.
      await expect(
        webhookSecret(runtime.db, new DataKeys({ current, previous: null }), added[0]!.endpointId),
      ).rejects.toThrow(/neither MASTER_KEY nor MASTER_KEY_PREVIOUS/);
    });

    it("leaves no secret in a dump, the table files or the WAL", async () => {
      if (backend.env.DATABASE_URL) {
        expect(await markersInDatabase(backend.env, markers())).toEqual([]);
        expect(await markersInPostgresFiles(backend.env.DATABASE_URL, markers())).toEqual([]);
        return;
      }
      // PGlite writes its files when it closes: read them after.
      await runtime.close();
      runtime = await openRuntime(backend.env);
      expect(await markersInDatabase(backend.env, markers())).toEqual([]);
    });
  },
);
