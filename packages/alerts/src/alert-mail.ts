import type { AlertItem, AlertRaised, AlertRuleKind } from "@dmarc-ledger/events";
import { dashboardLink } from "./dashboard-links.js";
import {
  escapeHtml,
  type FigureValue,
  fieldLabel,
  figureText,
  itemsHeading,
  ruleTitle,
} from "./mail-words.js";

/** The most members of a finding a mail lists; the rest are counted and left to the dashboard. */
export const mailItemLimit = 20;

/** Fields that name an item (shown first, as its heading), in the order they are looked for. */
const itemNames = ["sender", "sourceIp", "domain", "name"];

interface Line {
  label: string;
  value: string;
}

/** A record's fields in plain words, those without a value left out. */
function described(
  rule: AlertRuleKind,
  record: Record<string, FigureValue>,
  options: { skip?: string[]; item?: boolean } = {},
): Line[] {
  return Object.entries(record).flatMap(([field, value]) => {
    if (options.skip?.includes(field)) return [];
    const text = figureText(field, value);
    return text === null ? [] : [{ label: fieldLabel(rule, field, options.item), value: text }];
  });
}

/** One member of a finding: its name, then its figures. */
function describedItem(rule: AlertRuleKind, item: AlertItem): { name: string; lines: Line[] } {
  const nameField = itemNames.find((field) => typeof item[field] === "string" && item[field] !== "");
  const name = nameField ? String(item[nameField]) : "";
  return { name, lines: described(rule, item, { skip: nameField ? [nameField] : [], item: true }) };
}

const dayOf = (iso: string) => iso.slice(0, 10);

/** The period in words: a moment, one (report) day, or a span of days. */
function periodLine(period: AlertRaised["period"]): Line {
  if (period.start === period.end)
    return { label: "When", value: `${period.start.slice(0, 16).replace("T", " ")} UTC` };
  const [first, last] = [dayOf(period.start), dayOf(period.end)];
  return first === last
    ? { label: "Report day", value: `${first} (UTC)` }
    : { label: "Period", value: `${first} to ${last} (UTC)` };
}

/**
 * One alert as a mail a person reads: subject, plain text and HTML with the same facts. Figures
 * and items are in plain words (mail-words.ts), at most mailItemLimit items are listed, "so far"
 * says the day's reports may still arrive, and a link opens the dashboard's view of the figures.
 */
export function alertMail(
  alert: AlertRaised,
  dashboardUrl: string,
): { subject: string; text: string; html: string } {
  const title = ruleTitle(alert);
  const subject = `[dmarc-ledger] ${title}${alert.domain ? ` for ${alert.domain}` : ""}${alert.revises ? " (updated)" : ""}`;
  const facts: Line[] = [
    ...(alert.domain ? [{ label: "Domain", value: alert.domain }] : []),
    periodLine(alert.period),
    // The report day is said above, from the period.
    ...described(alert.rule, alert.figures, { skip: ["day"] }),
  ];
  const items = (alert.items ?? []).map((item) => describedItem(alert.rule, item));
  const listed = items.slice(0, mailItemLimit);
  const more = items.length - listed.length;
  const notes = [
    ...(alert.soFar
      ? [
          `These are the figures so far: reports for ${dayOf(alert.period.start)} may still arrive, and the totals may grow.`,
        ]
      : []),
    ...(alert.revises ? [`This updates an earlier alert (${alert.revises}) about the same finding.`] : []),
  ];
  const link = dashboardLink(alert, dashboardUrl);
  const itemLine = (item: (typeof items)[number]) =>
    `- ${item.name}${item.lines.length ? `: ${item.lines.map((line) => `${line.label} ${line.value}`).join(", ")}` : ""}`;
  const moreText = more > 0 ? `…and ${more} more: the dashboard lists them all.` : "";

  const text = [
    alert.summary,
    ...(notes.length ? ["", ...notes] : []),
    "",
    ...facts.map((line) => `${line.label}: ${line.value}`),
    ...(items.length
      ? [
          "",
          `${itemsHeading(alert.rule)} (${items.length.toLocaleString("en-US")}):`,
          ...listed.map(itemLine),
        ]
      : []),
    ...(moreText ? [moreText] : []),
    "",
    `See it in the dashboard: ${link}`,
    "",
    `Alert id: ${alert.alertId}`,
  ].join("\n");

  const cell = (value: string) => `<td>${escapeHtml(value)}</td>`;
  const itemColumns = [...new Set(listed.flatMap((item) => item.lines.map((line) => line.label)))];
  const itemTable = listed.length
    ? `<table><tr><th align="left"></th>${itemColumns.map((label) => `<th align="left">${escapeHtml(label)}</th>`).join("")}</tr>${listed
        .map(
          (item) =>
            `<tr>${cell(item.name)}${itemColumns
              .map((label) => cell(item.lines.find((line) => line.label === label)?.value ?? ""))
              .join("")}</tr>`,
        )
        .join("")}</table>`
    : "";
  const html = [
    "<!doctype html><html><body>",
    `<p>${escapeHtml(alert.summary)}</p>`,
    ...notes.map((note) => `<p><em>${escapeHtml(note)}</em></p>`),
    `<table>${facts.map((line) => `<tr><th align="left">${escapeHtml(line.label)}</th>${cell(line.value)}</tr>`).join("")}</table>`,
    listed.length
      ? `<p>${escapeHtml(itemsHeading(alert.rule))} (${items.length.toLocaleString("en-US")}):</p>${itemTable}`
      : "",
    moreText ? `<p>${escapeHtml(moreText)}</p>` : "",
    `<p><a href="${escapeHtml(link)}">See it in the dashboard</a></p>`,
    `<p><small>Alert id: ${escapeHtml(alert.alertId)}</small></p>`,
    "</body></html>",
  ].join("");
  return { subject, text, html };
}
