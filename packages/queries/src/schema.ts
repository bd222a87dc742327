import type { ReportAndTenancySchema } from "@dmarc-ledger/report-read-models";
import type { SafeSpfSchema } from "@dmarc-ledger/safe-spf-service";

/** What the queries read (and never write): the report read models, the tenancy's, Safe SPF's. */
export type QuerySchema = ReportAndTenancySchema & SafeSpfSchema;
