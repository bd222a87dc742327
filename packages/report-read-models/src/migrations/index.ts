import type { MigrationSet } from "@dmarc-ledger/db";
import { aggDomain } from "./001_agg_domain.js";
import { aggOrganization } from "./002_agg_organization.js";
import { aggSource } from "./003_agg_source.js";
import { sourceIpName } from "./004_source_ip_name.js";
import { forensicReport } from "./005_forensic_report.js";
import { reportDomain } from "./006_report_domain.js";
import { sourceRankings } from "./007_source_rankings.js";
import { rankingExtents } from "./008_ranking_extents.js";
import { rankingExtentsAsOffsets } from "./009_ranking_extents_as_offsets.js";
import { sourceChangeCounter } from "./010_source_change_counter.js";
import { sourceIpAnswers } from "./011_source_ip_answers.js";
import { rankingUpkeepByChange } from "./012_ranking_upkeep_by_change.js";
import { aggDomainDay } from "./013_agg_domain_day.js";
import { sourceIpNaming } from "./014_source_ip_naming.js";
import { forensicPersonal } from "./015_forensic_personal.js";
import { aggSenderFact } from "./016_agg_sender_fact.js";
import { senderRankings } from "./017_sender_rankings.js";
import { tenantDayTotals } from "./018_tenant_day_totals.js";
import { aggSenderDelta } from "./019_agg_sender_delta.js";
import { reportDomainToken } from "./020_report_domain_token.js";
import { aggSenderFactAppended } from "./021_agg_sender_fact_appended.js";
import { forensicDetails } from "./022_forensic_details.js";
import { tlsFacts } from "./023_tls_facts.js";
import { sourceIpNamedBy } from "./024_source_ip_named_by.js";

/**
 * The report read models' tables (schema.ts). Until the read models were split (issue 22) the
 * read-model set (`read_models`) made them; a database it migrated carries its migrations over,
 * which keep its order for each table.
 */
export const reportReadModelMigrations: MigrationSet = {
  name: "report_read_models",
  migrations: {
    "001_agg_domain": aggDomain,
    "002_agg_organization": aggOrganization,
    "003_agg_source": aggSource,
    "004_source_ip_name": sourceIpName,
    "005_forensic_report": forensicReport,
    "006_report_domain": reportDomain,
    "007_source_rankings": sourceRankings,
    "008_ranking_extents": rankingExtents,
    "009_ranking_extents_as_offsets": rankingExtentsAsOffsets,
    "010_source_change_counter": sourceChangeCounter,
    "011_source_ip_answers": sourceIpAnswers,
    "012_ranking_upkeep_by_change": rankingUpkeepByChange,
    "013_agg_domain_day": aggDomainDay,
    "014_source_ip_naming": sourceIpNaming,
    "015_forensic_personal": forensicPersonal,
    "016_agg_sender_fact": aggSenderFact,
    "017_sender_rankings": senderRankings,
    "018_tenant_day_totals": tenantDayTotals,
    "019_agg_sender_delta": aggSenderDelta,
    "020_report_domain_token": reportDomainToken,
    "021_agg_sender_fact_appended": aggSenderFactAppended,
    "022_forensic_details": forensicDetails,
    "023_tls_facts": tlsFacts,
    "024_source_ip_named_by": sourceIpNamedBy,
  },
  formerly: {
    set: "read_models",
    migrations: {
      "001_agg_domain": "001_skeleton",
      "002_agg_organization": "002_groupings",
      "003_agg_source": "002_groupings",
      "004_source_ip_name": "002_groupings",
      "005_forensic_report": "002_groupings",
      "006_report_domain": "004_report_domains",
      "007_source_rankings": "005_source_rankings",
      "008_ranking_extents": "006_ranking_extents",
      "009_ranking_extents_as_offsets": "007_ranking_extents_as_offsets",
      "010_source_change_counter": "008_source_change_counter",
      "011_source_ip_answers": "010_source_ip_names",
    },
  },
};
