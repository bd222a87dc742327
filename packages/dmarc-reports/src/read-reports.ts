import { AggregateXmlReader } from "./aggregate/aggregate-xml-reader.js";
import { detectFormat } from "./containers/detect-format.js";
import { gunzip } from "./containers/gunzip.js";
import { unzipReport } from "./containers/unzip.js";
import { ReportParseError } from "./errors.js";
import { type ByteSource, bytesSource, peek, readAll, toByteSource } from "./io/byte-source.js";
import { readMail } from "./mail/read-mail.js";
import { type Limits, resolveLimits } from "./options.js";
import { readTlsReport } from "./tls/read-tls-report.js";
import type { ParseOptions, ReportItem } from "./types.js";

/** Containers inside containers (gzip in gzip, zip in a mail in a mail…) stop here. */
const MAX_NESTING = 8;
const SNIFF_BYTES = 4096;

interface Layer {
  limits: Limits;
  depth: number;
  /** Where the bytes come from, for error messages: "input", "gzip content", … */
  where: string;
  /** Recoveries made by container layers, added to the report's warnings. */
  notes: string[];
}

/**
 * Streams the reports in an input: aggregate reports as begin / row batches / end, failure reports
 * and SMTP TLS reports (RFC 8460) whole.
 * Memory stays bounded for raw, gzip and zip XML of any size; mails are read whole (up to the size limit).
 */
export async function* readReports(
  input: AsyncIterable<Uint8Array> | NodeJS.ReadableStream,
  options?: ParseOptions,
): AsyncGenerator<ReportItem> {
  yield* readLayer(toByteSource(input), {
    limits: resolveLimits(options),
    depth: 0,
    where: "input",
    notes: [],
  });
}

async function* readLayer(source: ByteSource, layer: Layer): AsyncGenerator<ReportItem> {
  if (layer.depth > MAX_NESTING) {
    throw new ReportParseError("nesting_too_deep", `containers nested more than ${MAX_NESTING} deep`);
  }
  const { head, source: replay } = await peek(source, SNIFF_BYTES);
  const inner = (where: string): Layer => ({ ...layer, depth: layer.depth + 1, where });
  switch (detectFormat(head)) {
    case "empty":
      throw new ReportParseError("empty_input", `${layer.where} is empty`);
    case "gzip":
      yield* readLayer(gunzip(replay, layer.limits, layer.notes), inner("gzip content"));
      return;
    case "zip": {
      const archive = await readAll(replay, layer.limits.maxDecompressedBytes, "zip archive");
      yield* readLayer(unzipReport(archive, layer.limits), inner("zip entry"));
      return;
    }
    case "xml":
      yield* readAggregateXml(replay, layer);
      return;
    case "json":
      yield await readTlsReport(replay, layer.where, layer.notes);
      return;
    case "mail": {
      const mail = await readAll(replay, layer.limits.maxMailBytes, "mail", "mail_too_large");
      yield* readMail(mail, (bytes) => readLayer(bytesSource(bytes), { ...inner("mail part"), notes: [] }));
      return;
    }
    case "html":
      throw new ReportParseError("not_a_report", `${layer.where} is HTML, not a report`);
    default:
      throw new ReportParseError("not_a_report", `${layer.where} is neither XML, JSON, gzip, zip nor a mail`);
  }
}

async function* readAggregateXml(source: ByteSource, layer: Layer): AsyncGenerator<ReportItem> {
  const reader = new AggregateXmlReader(layer.limits);
  for await (const chunk of source) {
    const items = reader.write(chunk);
    if (items.length > 0) yield* items;
  }
  for (const item of reader.finish()) {
    if (item.kind === "aggregate-end") yield { ...item, warnings: [...layer.notes, ...item.warnings] };
    else yield item;
  }
}
