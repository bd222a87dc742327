import type { ComponentChildren } from "preact";
import { toCsv } from "../lib/csv.js";
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

function download(name: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: "text/csv;charset=utf-8" }));
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
 * order shown). Its sort and page are in the URL (`<id>_sort`, `<id>_page`).
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
}) {
  const { params } = useLocation();
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
          onClick={() => download(csvName, tableCsv(sorted, columns))}
        >
          Download CSV
        </button>
      </div>
    </div>
  );
}
