/**
 * Arrays sent as one parameter in PostgreSQL's array literal (arrayParam) come back element for
 * element, whatever a string holds, on PostgreSQL and on PGlite.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import {
  type ArrayElement,
  type ArrayElementType,
  arrayLiteral,
  arrayParam,
  openDatabase,
} from "../src/index.js";
import { createTestDatabase, type TestDatabase } from "../src/testing/index.js";

const strings = [
  "plain",
  "",
  'a "quoted" word',
  "back\\slash",
  '\\"',
  "a,b",
  "{braces}",
  "NULL",
  "null",
  " leading and trailing ",
  "tab\tnew\nline",
  "naïve 🙂 日本",
  "192.0.2.1",
  "2001:db8::1",
];

const cases: { type: ArrayElementType; values: ArrayElement[] }[] = [
  { type: "text", values: strings },
  { type: "text", values: ["x", null, "y", null] },
  { type: "text", values: [] },
  { type: "bigint", values: [0, 1, -1, 2 ** 53 - 1, 9_007_199_254_740_993n, null] },
  { type: "integer", values: [20_000, -5, 0] },
  { type: "boolean", values: [true, false, null] },
];

async function roundTrip(database: { db: import("kysely").Kysely<unknown> }) {
  for (const { type, values } of cases) {
    const { rows } = await sql<{ v: unknown }>`select v::text as v from unnest(${arrayParam(values, type)})
      with ordinality as u(v, n) order by n`.execute(database.db);
    // PostgreSQL's own text of each element: booleans come back as true / false.
    const expected = values.map((value) => (value === null ? null : String(value)));
    expect(
      rows.map((row) => row.v),
      `${type}: ${arrayLiteral(values)}`,
    ).toEqual(expected);
  }
}

describe("arrayParam", () => {
  let postgres: TestDatabase | undefined;
  afterAll(async () => {
    await postgres?.drop();
  });

  it("sends text, bigint, integer and boolean arrays that PostgreSQL reads back as they were", async () => {
    postgres = await createTestDatabase("dl_db_array_param");
    const database = await openDatabase({ kind: "postgres", url: postgres.url });
    try {
      await roundTrip(database);
    } finally {
      await database.close();
    }
  });

  it("and PGlite", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "dl-db-array-"));
    const database = await openDatabase({ kind: "pglite", dataDir });
    try {
      await roundTrip(database);
    } finally {
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
