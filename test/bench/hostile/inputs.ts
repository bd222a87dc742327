/**
 * Hostile inputs for the memory benchmark, written at run time into a directory the caller owns
 * (never committed): a report of many rows, a report with one huge text node, and a big mail.
 */
import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { join } from "node:path";

const MiB = 1024 * 1024;

async function write(out: WriteStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, "drain");
}

async function close(out: WriteStream): Promise<void> {
  out.end();
  await once(out, "finish");
}

function header(reportId: string, orgName = "bench.example"): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<feedback>
  <version>1.0</version>
  <report_metadata>
    <org_name>${orgName}</org_name>
    <email>noreply-dmarc@bench.example</email>
    <report_id>${reportId}</report_id>
    <date_range><begin>1700006400</begin><end>1700092799</end></date_range>
  </report_metadata>
  <policy_published><domain>example.com</domain><adkim>r</adkim><aspf>r</aspf><p>none</p><sp>none</sp><pct>100</pct></policy_published>
`;
}

/** One record of about 400 bytes; `i` varies the source address. */
export function recordXml(i: number): string {
  const ip = `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
  return `  <record>
    <row><source_ip>${ip}</source_ip><count>3</count>
      <policy_evaluated><disposition>none</disposition><dkim>pass</dkim><spf>fail</spf></policy_evaluated></row>
    <identifiers><header_from>example.com</header_from></identifiers>
    <auth_results><dkim><domain>example.com</domain><selector>s1</selector><result>pass</result></dkim>
      <spf><domain>mail.example.net</domain><result>fail</result></spf></auth_results>
  </record>
`;
}

/** An aggregate report of `rows` records (1,000,000 rows: about 400 MB). */
export async function writeManyRows(path: string, rows: number): Promise<void> {
  const out = createWriteStream(path);
  await write(out, header(`many-rows-${rows}`));
  let buffer = "";
  for (let i = 0; i < rows; i++) {
    buffer += recordXml(i);
    if (buffer.length > MiB) {
      await write(out, buffer);
      buffer = "";
    }
  }
  await write(out, `${buffer}</feedback>\n`);
  await close(out);
}

/** A report whose org_name is one text node of `bytes` bytes. */
export async function writeHugeTextNode(path: string, bytes: number): Promise<void> {
  const out = createWriteStream(path);
  const [before, after] = header("huge-text", "\u0000SPLIT\u0000").split("\u0000SPLIT\u0000") as [
    string,
    string,
  ];
  await write(out, before);
  const block = "A".repeat(MiB);
  for (let written = 0; written < bytes; written += block.length) await write(out, block);
  await write(out, `${after}${recordXml(1)}</feedback>\n`);
  await close(out);
}

/** A mail of about `bytes` bytes carrying a plain XML report as a base64 attachment. */
export async function writeBigMail(path: string, bytes: number): Promise<void> {
  const out = createWriteStream(path);
  const boundary = "bench-boundary";
  await write(
    out,
    `From: noreply-dmarc@bench.example\r\nTo: dmarc@example.com\r\nSubject: Report domain: example.com\r\n` +
      `Message-ID: <big-mail@bench.example>\r\nMIME-Version: 1.0\r\n` +
      `Content-Type: multipart/mixed; boundary="${boundary}"\r\n\r\n--${boundary}\r\n` +
      `Content-Type: text/plain\r\n\r\nThis is a DMARC aggregate report.\r\n--${boundary}\r\n` +
      `Content-Type: text/xml; name="report.xml"\r\nContent-Transfer-Encoding: base64\r\n` +
      `Content-Disposition: attachment; filename="report.xml"\r\n\r\n`,
  );
  // base64 grows by 4/3 and a CRLF per 76 characters.
  const xmlBytes = Math.floor((bytes * 3) / 4 / (78 / 76));
  let xml = header("big-mail");
  let pending = "";
  const flush = async (final: boolean) => {
    const usable = final ? pending.length : pending.length - (pending.length % 57);
    const take = Buffer.from(pending.slice(0, usable), "latin1");
    pending = pending.slice(usable);
    let lines = "";
    for (let offset = 0; offset < take.length; offset += 57) {
      lines += `${take.subarray(offset, offset + 57).toString("base64")}\r\n`;
    }
    await write(out, lines);
  };
  let written = xml.length;
  for (let i = 0; written < xmlBytes; i++) {
    const record = recordXml(i);
    xml += record;
    written += record.length;
    if (xml.length > MiB) {
      pending += xml;
      xml = "";
      await flush(false);
    }
  }
  pending += `${xml}</feedback>\n`;
  await flush(true);
  await write(out, `--${boundary}--\r\n`);
  await close(out);
}

export const hostileFiles = (dir: string) => ({
  manyRows: join(dir, "many-rows.xml"),
  hugeText: join(dir, "huge-text.xml"),
  bigMail: join(dir, "big-mail.eml"),
});
