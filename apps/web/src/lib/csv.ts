/**
 * RFC 4180 CSV: fields with a comma, semicolon, quote or line break are quoted, quotes doubled;
 * lines end in CRLF (semicolons too, for the spreadsheets whose locale splits on them).
 *
 * A text cell a spreadsheet would evaluate gets a leading apostrophe (OWASP's CSV injection
 * advice): one starting with = + - @ (or their full-width forms), a tab or a carriage return,
 * also after leading whitespace or quotes, which spreadsheets skip. A reporter's organisation
 * name is not a formula to trust. A cell that is wholly a number ("-2", "+1.5e3") is left as it
 * is: it is a value, not a formula.
 */
export function toCsv(
  header: readonly string[],
  rows: readonly (readonly (string | number | null)[])[],
): string {
  return csvLines([header, ...rows]);
}

/** Lines of CSV, each ending in CRLF: a piece of a file written page by page. */
export function csvLines(rows: readonly (readonly (string | number | null)[])[]): string {
  return rows.map((row) => `${row.map(csvField).join(",")}\r\n`).join("");
}

const evaluated = /^(?:[\t\r]|[\s'"`]*[=+\-@\uff1d\uff0b\uff0d\uff20])/u;
const wholeNumber = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Whether a spreadsheet opening the cell would run it as a formula. */
export function isFormulaLike(text: string): boolean {
  return evaluated.test(text) && !wholeNumber.test(text);
}

function csvField(value: string | number | null): string {
  if (value === null) return "";
  let text = String(value);
  if (typeof value === "string" && isFormulaLike(text)) text = `'${text}`;
  return /[",;\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
/** Parses what toCsv writes (for tests and for reading one back). */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ",") {
      row.push(field);
      field = "";
    } else if (char === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i++;
    } else field += char;
  }
  if (field !== "" || row.length > 0) rows.push([...row, field]);
  return rows;
}
