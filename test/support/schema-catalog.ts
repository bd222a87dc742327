import { type Kysely, sql } from "kysely";

/**
 * Tables in the database that are not the read side's: the events, the intake's raw archive and
 * its owners, the users' tables (which never were the read_models set's), bookkeeping.
 */
const otherTables =
  /^(events|streams|raw_input|raw_input_receipt|raw_input_domain|imap_progress|user_account|user_role|tenant_activity|user_credential|user_password_link|user_session|sign_in_throttle|.*_migration|.*_migration_lock)$/;

/**
 * The read side's schema in the public schema, one line per column, constraint, index and
 * sequence, sorted: what a migration made, in a form two databases can be compared by (and a
 * fixture can hold).
 */
export async function readSideCatalog(db: Kysely<unknown>): Promise<string[]> {
  const lines: string[] = [];
  const { rows: columns } = await sql<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
    column_default: string | null;
  }>`select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
    where table_schema = 'public'`.execute(db);
  for (const c of columns) {
    if (otherTables.test(c.table_name)) continue;
    lines.push(
      `column ${c.table_name}.${c.column_name} ${c.data_type} ${c.is_nullable === "YES" ? "null" : "not null"}${
        c.column_default ? ` default ${c.column_default}` : ""
      }`,
    );
  }
  const { rows: constraints } = await sql<{ table_name: string; name: string; definition: string }>`
    select t.relname as table_name, c.conname as name, pg_get_constraintdef(c.oid) as definition
    from pg_constraint c join pg_class t on t.oid = c.conrelid join pg_namespace n on n.oid = t.relnamespace
    where n.nspname = 'public'`.execute(db);
  for (const c of constraints) {
    if (!otherTables.test(c.table_name)) lines.push(`constraint ${c.table_name}.${c.name} ${c.definition}`);
  }
  const { rows: indexes } = await sql<{ tablename: string; indexdef: string }>`
    select tablename, indexdef from pg_indexes where schemaname = 'public'`.execute(db);
  for (const i of indexes) if (!otherTables.test(i.tablename)) lines.push(`index ${i.indexdef}`);
  const { rows: sequences } = await sql<{ sequence_name: string }>`
    select sequence_name from information_schema.sequences where sequence_schema = 'public'`.execute(db);
  for (const s of sequences)
    if (!/^(events|raw_input_receipt)_/.test(s.sequence_name)) lines.push(`sequence ${s.sequence_name}`);
  return lines.sort();
}
