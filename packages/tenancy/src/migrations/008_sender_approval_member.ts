import type { Kysely } from "kysely";

/**
 * The addresses each decided service grouped for its domain when it was decided
 * (SenderApprovalSet v2), and how many there were: a service's group grows as reports and naming
 * bring it addresses, and what joined since the decision is what a person has not seen.
 * `members_count` null: the decision recorded none (a range, or a v1 event).
 */
export const senderApprovalMember = {
  // biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
  up: async (db: Kysely<any>) => {
    await db.schema.alterTable("sender_approval").addColumn("members_count", "integer").execute();
    await db.schema
      .createTable("sender_approval_member")
      .addColumn("domain", "text", (c) => c.notNull())
      .addColumn("service", "text", (c) => c.notNull())
      .addColumn("source_ip", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("sender_approval_member_pk", ["domain", "service", "source_ip"])
      .execute();
  },
};
