import { type RawBuilder, sql } from "kysely";

/** What an array parameter may hold: one PostgreSQL type per array. */
export type ArrayElement = string | number | bigint | boolean | null;

/** The element types the statements send arrays of. */
export type ArrayElementType = "text" | "bigint" | "integer" | "boolean";

/**
 * `values` as one parameter, cast to `type[]`: a statement that unnests a few arrays carries
 * thousands of rows in a dozen parameters. node-postgres serialises a JS array itself, element by
 * element through its generic functions (prepareValue, then two regular expression replaces
 * each); the read models' catch-up after an import of 10,000 reports sent 4 million elements
 * that way, 0.77 s of this process's CPU. Written here in one pass, quoting only strings.
 */
export function arrayParam(values: readonly ArrayElement[], type: ArrayElementType): RawBuilder<unknown> {
  return sql`${arrayLiteral(values)}::${sql.raw(type)}[]`;
}

/** Characters that must be escaped inside a double-quoted array element. */
const escaped = /[\\"]/;

/**
 * PostgreSQL's text form of a one-dimensional array: `{"a","b\"c",NULL,1,true}`. Joined from an
 * array of parts, not grown with `+=`: that makes a rope of one node per element, which
 * node-postgres flattens when it measures the parameter (Buffer.byteLength), and flattening
 * ropes of 200,000 elements cost 20 ns a character, about 1 s of an import of 10,000 reports.
 */
export function arrayLiteral(values: readonly ArrayElement[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) parts[i] = "NULL";
    else if (typeof value === "string")
      parts[i] = escaped.test(value) ? `"${value.replace(/[\\"]/g, "\\$&")}"` : `"${value}"`;
    else parts[i] = String(value);
  }
  return `{${parts.join(",")}}`;
}
