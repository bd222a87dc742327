import type { AlertRaised } from "@dmarc-ledger/events";

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );

/** One alert as a mail: subject, plain text and HTML (the same facts). */
export function alertMail(alert: AlertRaised): { subject: string; text: string; html: string } {
  const subject = `[dmarc-ledger] ${alert.rule.replaceAll("_", " ")}${alert.domain ? ` for ${alert.domain}` : ""}`;
  const figures = Object.entries(alert.figures).filter(([, value]) => value !== null && value !== "");
  const text = [
    alert.summary,
    "",
    `Rule: ${alert.rule}`,
    ...(alert.domain ? [`Domain: ${alert.domain}`] : []),
    `Period: ${alert.period.start} to ${alert.period.end}`,
    ...figures.map(([name, value]) => `${name}: ${value}`),
    "",
    `Alert id: ${alert.alertId}`,
  ].join("\n");
  const rows = [
    ["Rule", alert.rule],
    ...(alert.domain ? [["Domain", alert.domain]] : []),
    ["Period", `${alert.period.start} to ${alert.period.end}`],
    ...figures.map(([name, value]) => [name, String(value)]),
    ["Alert id", alert.alertId],
  ];
  const html = `<!doctype html><html><body><p>${escapeHtml(alert.summary)}</p><table>${rows
    .map(
      ([name, value]) => `<tr><th align="left">${escapeHtml(name!)}</th><td>${escapeHtml(value!)}</td></tr>`,
    )
    .join("")}</table></body></html>`;
  return { subject, text, html };
}
