import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { csvLines, toCsv } from "../lib/csv.js";
import { setParams, useLocation } from "../lib/router.js";

export interface Column<R> {
  /** Names the column in the URL's sort parameter. */
  key: string;
  label: string;
  /** What the column sorts by and the CSV holds. */
  value: (row: R) => string | number | null;
  /** How the cell shows it; the value as text when absent. */
  render?: (row: R) => ComponentChildren;
  numeric?: boolean;
  /** Long text (a subject, a reason) wraps; other cells keep to one line and the table scrolls. */
  wrap?: boolean;
  /** Names (a service, a network) wrap at word breaks in a narrower column than `wrap`'s. */
  wrapNames?: boolean;
}

const collator = new Intl.Collator("en", { numeric: true, sensitivity: "base" });

function compare(a: string | number | null, b: string | number | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return collator.compare(String(a), String(b));
}

/** The rows in the order of `sort` ("key" ascending, "-key" descending); ties keep the API's order. */
export function sortRows<R>(rows: readonly R[], columns: readonly Column<R>[], sort: string | null): R[] {
  const descending = sort?.startsWith("-") ?? false;
  const column = columns.find((c) => c.key === sort?.replace(/^-/, ""));
  if (!column) return [...rows];
  return rows
    .map((row, index) => ({ row, index }))
    .sort((x, y) => {
      const order = compare(column.value(x.row), column.value(y.row));
      // Nulls stay last whichever way.
      const nulls = column.value(x.row) === null || column.value(y.row) === null;
      return (order === 0 ? 0 : descending && !nulls ? -order : order) || x.index - y.index;
    })
    .map((entry) => entry.row);
}

export function tableCsv<R>(rows: readonly R[], columns: readonly Column<R>[]): string {
  return toCsv(
    columns.map((c) => c.label),
    rows.map((row) => columns.map((c) => c.value(row))),
  );
}

/**
 * The rows of a list the API holds more of than the table loaded: the CSV then asks for every
 * page, in the API's order, and writes each as it comes.
 */
export interface FullList<R> {
  total: number;
  page: (page: number) => Promise<readonly R[]>;
}

/**
 * Every row of the list as one file, page by page. In the API's order (the table's default sort)
 * each page becomes CSV text and a part of the file's Blob as it comes, which the browser holds
 * (and spills to disk), not the page's memory; in another order the rows are sorted first.
 */
async function fullCsv<R>(
  list: FullList<R>,
  columns: readonly Column<R>[],
  sort: string | null,
  progress: (rows: number) => void,
): Promise<Blob> {
  const line = (row: R) => columns.map((c) => c.value(row));
  const parts: BlobPart[] = [csvLines([columns.map((c) => c.label)])];
  const held: R[] = [];
  let read = 0;
  for (let page = 1; read < list.total; page++) {
    const rows = await list.page(page);
    if (rows.length === 0) break;
    if (sort === null) parts.push(csvLines(rows.map(line)));
    else held.push(...rows);
    read += rows.length;
    progress(read);
  }
  if (sort !== null) parts.push(csvLines(sortRows(held, columns, sort).map(line)));
  return new Blob(parts, { type: "text/csv;charset=utf-8" });
}

function download(name: string, text: string | Blob): void {
  const blob = typeof text === "string" ? new Blob([text], { type: "text/csv;charset=utf-8" }) : text;
  const url = URL.createObjectURL(blob);
  const anchor = document.createElement("a");
  anchor.href = url;
  anchor.download = name;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * A table of records: sortable by any column, in pages, downloadable as CSV (every row, in the
 * order shown; with `fullList`, when the API holds more rows than the table loaded, every row the
 * API holds, fetched page by page, in the same order). Its sort and page are in the URL
 * (`<id>_sort`, `<id>_page`).
 */
export function DataTable<R>({
  id,
  caption,
  columns,
  rows,
  rowKey,
  defaultSort,
  pageSize = 20,
  csvName,
  empty,
  note,
  selected,
  fullList,
}: {
  id: string;
  caption: string;
  columns: Column<R>[];
  rows: readonly R[];
  rowKey: (row: R) => string;
  defaultSort?: string;
  pageSize?: number;
  csvName: string;
  empty?: ComponentChildren;
  note?: ComponentChildren;
  selected?: string | null;
  fullList?: FullList<R>;
}) {
  const { params } = useLocation();
  const [exporting, setExporting] = useState<string | null>(null);
  const [exportFailed, setExportFailed] = useState(false);
  const sort = params.get(`${id}_sort`) ?? defaultSort ?? null;
  const sorted = sortRows(rows, columns, sort);
  const pages = Math.max(1, Math.ceil(sorted.length / pageSize));
  const page = Math.min(pages, Math.max(1, Number(params.get(`${id}_page`)) || 1));
  const shown = sorted.slice((page - 1) * pageSize, page * pageSize);
  const sortedBy = sort?.replace(/^-/, "");
  const descending = sort?.startsWith("-") ?? false;

  const sortBy = (column: Column<R>) => {
    const next =
      sortedBy === column.key
        ? descending
          ? column.key
          : `-${column.key}`
        : column.numeric
          ? `-${column.key}`
          : column.key;
    setParams({ [`${id}_sort`]: next, [`${id}_page`]: null });
  };

  if (rows.length === 0 && empty) return <>{empty}</>;
  return (
    <div class="table-block">
      <div class="table-wrap">
        <table id={id}>
          <caption class="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) => {
                const active = sortedBy === column.key;
                return (
                  <th
                    key={column.key}
                    scope="col"
                    class={column.numeric ? "numeric" : undefined}
                    aria-sort={active ? (descending ? "descending" : "ascending") : undefined}
                  >
                    <button type="button" class="sort" onClick={() => sortBy(column)}>
                      {column.label}
                      <span class="sort-mark" aria-hidden="true">
                        {active ? (descending ? "▼" : "▲") : ""}
                      </span>
                    </button>
                  </th>
                );
              })}
            </tr>
          </thead>
          <tbody>
            {shown.map((row) => (
              <tr key={rowKey(row)} class={selected === rowKey(row) ? "selected" : undefined}>
                {columns.map((column) => (
                  <td
                    key={column.key}
                    class={
                      column.numeric
                        ? "numeric"
                        : column.wrap
                          ? "wrap"
                          : column.wrapNames
                            ? "wrap-names"
                            : undefined
                    }
                  >
                    {column.render ? column.render(row) : String(column.value(row) ?? "–")}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div class="table-foot">
        <span class="table-count">
          {rows.length.toLocaleString("en")} {rows.length === 1 ? "row" : "rows"}
          {note ? <> · {note}</> : null}
        </span>
        {pages > 1 ? (
          <nav class="pager" aria-label={`Pages of ${caption}`}>
            <button
              type="button"
              disabled={page <= 1}
              onClick={() => setParams({ [`${id}_page`]: page - 1 })}
            >
              Previous
            </button>
            <span>
              Page {page} of {pages}
            </span>
            <button
              type="button"
              disabled={page >= pages}
              onClick={() => setParams({ [`${id}_page`]: page + 1 })}
            >
              Next
            </button>
          </nav>
        ) : null}
        <button
          type="button"
          class="link-button"
          disabled={exporting !== null}
          onClick={() => {
            if (!fullList || fullList.total <= rows.length) {
              download(csvName, tableCsv(sorted, columns));
              return;
            }
            const total = fullList.total.toLocaleString("en");
            setExportFailed(false);
            setExporting(`0 of ${total} rows`);
            // The API's order is the default sort's: those pages are written as they come.
            const order = sort === (defaultSort ?? null) ? null : sort;
            fullCsv(fullList, columns, order, (done) =>
              setExporting(`${done.toLocaleString("en")} of ${total} rows`),
            ).then(
              (blob) => {
                download(csvName, blob);
                setExporting(null);
              },
              () => {
                setExporting(null);
                setExportFailed(true);
              },
            );
          }}
        >
          {exporting === null ? "Download CSV" : `Preparing CSV: ${exporting}`}
        </button>
        {exportFailed ? <span role="alert">The CSV could not be made; try again.</span> : null}
      </div>
    </div>
  );
}
