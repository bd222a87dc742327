import { promisify } from "node:util";
import yauzl from "yauzl";
import { ReportParseError } from "../errors.js";
import type { ByteSource } from "../io/byte-source.js";
import { type Limits, RATIO_GRACE_BYTES } from "../options.js";
import { OutputBudget } from "./output-budget.js";

const openZip = promisify<Buffer, yauzl.Options, yauzl.ZipFile>(yauzl.fromBuffer);

async function listEntries(zip: yauzl.ZipFile): Promise<yauzl.Entry[]> {
  return new Promise((resolve, reject) => {
    const entries: yauzl.Entry[] = [];
    zip.on("entry", (entry: yauzl.Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.on("end", () => resolve(entries));
    zip.on("error", reject);
    zip.readEntry();
  });
}

/** Characters of entry names a refusal lists; the rest are counted. */
const LISTED_NAMES_CHARS = 300;
/** A name longer than this is shown cut, with an ellipsis, so that one name cannot fill the list. */
const LISTED_NAME_CHARS = 100;

/** A name as a refusal shows it: whole up to LISTED_NAME_CHARS, else cut, with an ellipsis. */
function nameShown(name: string): string {
  return name.length > LISTED_NAME_CHARS ? `${name.slice(0, LISTED_NAME_CHARS)}…` : name;
}

/** The entries' names, whole, as many as fit in LISTED_NAMES_CHARS (at least one), and how many more. */
function namesOf(files: readonly yauzl.Entry[]): string {
  const shown: string[] = [];
  let chars = 0;
  for (const { fileName } of files) {
    const name = nameShown(fileName);
    if (shown.length > 0 && chars + 2 + name.length > LISTED_NAMES_CHARS) break;
    shown.push(name);
    chars += (shown.length > 1 ? 2 : 0) + name.length;
  }
  const rest = files.length - shown.length;
  return rest === 0 ? shown.join(", ") : `${shown.join(", ")} …and ${rest.toLocaleString("en-US")} more`;
}

/**
 * The single report file of a zip archive, streamed under the limits. The central directory is read
 * first, so archives with other files, and entries declaring too large a size, are refused before any
 * byte is inflated. The archive itself is held in memory (it is the compressed, small side).
 */
export async function* unzipReport(archive: Buffer, limits: Limits): ByteSource {
  let zip: yauzl.ZipFile;
  let entries: yauzl.Entry[];
  try {
    zip = await openZip(archive, { lazyEntries: true, validateEntrySizes: true, decodeStrings: true });
    entries = await listEntries(zip);
  } catch (error) {
    throw new ReportParseError("corrupt_archive", `zip archive is corrupt: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const files = entries.filter((entry) => !entry.fileName.endsWith("/"));
  if (files.length !== 1) {
    throw new ReportParseError(
      files.length === 0 ? "not_a_report" : "zip_unexpected_entries",
      files.length === 0
        ? "zip archive holds no file"
        : `zip archive must hold one report file, holds ${files.length.toLocaleString("en-US")}: ${namesOf(files)}`,
    );
  }
  const entry = files[0]!;
  if (entry.uncompressedSize > limits.maxDecompressedBytes) {
    throw new ReportParseError(
      "decompressed_too_large",
      `zip entry ${nameShown(entry.fileName)} declares ${entry.uncompressedSize} bytes, over the limit of ${limits.maxDecompressedBytes}`,
    );
  }
  if (
    entry.uncompressedSize > RATIO_GRACE_BYTES &&
    entry.uncompressedSize > Math.max(1, entry.compressedSize) * limits.maxCompressionRatio
  ) {
    throw new ReportParseError(
      "compression_ratio_exceeded",
      `zip entry ${nameShown(entry.fileName)} expands more than ${limits.maxCompressionRatio} times`,
    );
  }
  const openReadStream = promisify(zip.openReadStream.bind(zip));
  const budget = new OutputBudget(limits, `zip entry ${nameShown(entry.fileName)}`);
  let stream: NodeJS.ReadableStream;
  try {
    stream = await openReadStream(entry);
  } catch (error) {
    throw new ReportParseError("corrupt_archive", `zip entry is corrupt: ${(error as Error).message}`, {
      cause: error,
    });
  }
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      // Sizes in the directory can lie; count what really comes out.
      budget.add(chunk.length, Math.max(1, entry.compressedSize));
      yield chunk;
    }
  } catch (error) {
    if (error instanceof ReportParseError) throw error;
    throw new ReportParseError("corrupt_archive", `zip entry is corrupt: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    (stream as unknown as { destroy?: () => void }).destroy?.();
    zip.close();
  }
}
