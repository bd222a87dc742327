import { readFileSync } from "node:fs";
import nodemailer, { type Transporter } from "nodemailer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failureCorpus } from "../support/corpus.js";
import {
  type Backend,
  backends,
  cli,
  type ServiceHandle,
  startTestService,
} from "../support/service-harness.js";
import { walkingSkeletonExpected, walkingSkeletonSamples } from "../support/walking-skeleton-samples.js";

// The walking skeleton's three one-row samples for example.com (test/support explains
// how these counters follow from them): whichever channel brings them, the API says the same.
const { veeam, addison, exampleNet } = walkingSkeletonSamples;
const expectedAll = walkingSkeletonExpected;

describe.each(backends)(
  "reports by SMTP, read back through the API (dmarc-ledger start on %s)",
  (_name, open) => {
    let backend: Backend;
    let handle: ServiceHandle;
    let apiKey: string;
    let transport: Transporter;

    beforeAll(async () => {
      const opened = await open();
      backend = {
        ...opened,
        env: { ...opened.env, REPORTS_DOMAIN: "reports.test", SMTP_PORT: "0", SMTP_HOST: "127.0.0.1" },
      };
      const created = await cli(backend.env, "tenant", "create", "acme", "--json");
      expect(created.code, created.err).toBe(0);
      apiKey = (JSON.parse(created.out) as { apiKey: string }).apiKey;
      handle = await startTestService(backend.env);
      expect(handle.service.intake.smtp).not.toBeNull();
      transport = nodemailer.createTransport({
        host: "127.0.0.1",
        port: handle.service.intake.smtp!.port,
        secure: false,
      });
      expect((await handle.put("add-domain", apiKey, { domain: "example.com" })).status).toBe(200);
    });

    afterAll(async () => {
      transport?.close();
      await handle?.stop();
      await backend?.cleanup();
    });

    /** Reads until the answer is what is expected: the projector catches up in the background. */
    async function eventually(path: string, check: (json: unknown) => boolean): Promise<unknown> {
      let json: unknown;
      for (let attempt = 0; attempt < 200; attempt++) {
        json = (await handle.get(path, apiKey)).json;
        if (check(json)) return json;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return json;
    }

    it("counts a report brought by import and again by SMTP once, and the others by SMTP", async () => {
      // The same report by another channel first.
      const imported = await cli(backend.env, "import", veeam);
      expect(imported.out).toContain("1 reports stored, 0 duplicates");

      const sends = [
        { attachments: [{ filename: "veeam.xml", content: readFileSync(veeam) }] },
        {
          attachments: [{ filename: "addison.xml", content: readFileSync(addison), contentType: "text/xml" }],
        },
        { text: readFileSync(exampleNet, "utf8") },
      ];
      const responses: string[] = [];
      for (const content of sends) {
        const info = await transport.sendMail({
          from: "dmarc@receiver.test",
          to: "rua@reports.test",
          ...content,
        });
        responses.push(info.response ?? "");
      }
      expect(responses).toEqual([
        "250 OK: aggregate report duplicate",
        "250 OK: aggregate report stored",
        "250 OK: aggregate report stored",
      ]);
      // Counted on the service's /metrics, by channel and outcome.
      const metrics = await (await fetch(new URL("/metrics", handle.service.apiRoot))).text();
      expect(metrics).toMatch(/^intake_inputs_total\{channel="smtp",status="duplicate"\} 1$/m);
      expect(metrics).toMatch(/^intake_inputs_total\{channel="smtp",status="stored"\} 2$/m);

      const path = "aggregate_by_domain?start=0&end=2000000000";
      const volume = (json: unknown) =>
        Number((json as { records: { Volume: string }[] }).records[0]?.Volume ?? 0);
      const answer = await eventually(path, (json) => volume(json) >= 3);
      expect(answer).toEqual({ status: "SUCCESS", total: 1, records: [expectedAll] });

      // And the other way round: what came by SMTP is a duplicate for import.
      const again = await cli(backend.env, "import", addison, exampleNet);
      expect(again.out).toContain("0 reports stored, 2 duplicates");
      expect((await handle.get(path, apiKey)).json).toEqual({
        status: "SUCCESS",
        total: 1,
        records: [expectedAll],
      });
    });

    it("shows a failure report sent by SMTP on /forensic", async () => {
      const info = await transport.sendMail({
        envelope: { from: "dmarc@receiver.test", to: ["ruf@reports.test"] },
        raw: readFileSync(`${failureCorpus}dmarc_ruf_report_linkedin.eml`),
      });
      expect(info.response).toBe("250 OK: failure report stored");
      const answer = (await eventually(
        "forensic?start=0&end=2000000000",
        (json) => Number((json as { total: string }).total) >= 1,
      )) as { total: string; records: { Domain: string; Received: string }[] };
      expect(answer.total).toBe("1");
      expect(answer.records[0]).toMatchObject({ Domain: "example.com", Received: "2019-04-30 02:09:00" });
    });
  },
);
