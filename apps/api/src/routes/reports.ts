import {
  type IngestedItem,
  type InputBytes,
  InputTooLargeError,
  type ReceivedInput,
  receiveInput,
  spool,
} from "@dmarc-ledger/intake";
import { ApiError, bodyTooLarge } from "../api-error.js";
import { callerMeta } from "../caller-meta.js";
import type { Endpoint } from "../endpoints.js";
import { awaitProjection } from "../read-your-writes.js";
import type { ApiContext } from "../state.js";
import { MultipartRefusal, multipartOverheadBytes, readFileParts, type UploadedFile } from "./multipart.js";

const tooLarge = (limit: number) => bodyTooLarge("Report bodies", limit, "MAX_REPORT_BYTES");

/** One entry per report found, or one for an input that could not be read (kept with the reason). */
function describeItem(item: IngestedItem) {
  switch (item.kind) {
    case "aggregate":
      return { ...item };
    case "failure":
      return { ...item, rows: null, messages: null, dropped: null };
    case "tls":
      return { ...item, rows: null, messages: null, dropped: null };
    case "rejected":
      return { kind: item.kind, code: item.code, reason: item.reason, status: item.status };
  }
}

/** What the upload answers for one input: its archive entry and the reports found in it. */
function describeReceived(received: ReceivedInput) {
  return {
    sha256: received.sha256,
    bytes: received.size,
    archive: received.archive,
    outcome: received.status,
    // The rows its reports left out, in all; each aggregate item says which and why.
    rowsDropped: received.dropped.rows,
    items: received.items.map(describeItem),
  };
}

function receive(ctx: ApiContext, input: InputBytes, source: string): Promise<ReceivedInput> {
  const holder = ctx.state.holder!;
  return receiveInput(
    {
      store: ctx.deps.store,
      db: ctx.deps.db,
      archiveMaxBytes: ctx.deps.config.archiveMaxBytes,
      parseOptions: { maxDecompressedBytes: ctx.deps.config.maxDecompressedBytes },
      parseThreads: ctx.deps.config.parseThreads,
      metrics: ctx.deps.metrics?.intake,
      dataKeys: ctx.deps.dataKeys,
    },
    input,
    {
      channel: "upload",
      source,
      // The sender sees its upload in its inputs, even when no report in it names its domains.
      tenantId: holder.tenantId,
      metadata: callerMeta(ctx),
    },
  );
}

/**
 * POST /api/reports: a raw report file or mail as the body, whatever its content type. The body
 * streams into the archive (hashed and compressed as it arrives, never more than the limit read);
 * 202 goes out only once the input and its reports are committed. A multipart/form-data body
 * (`curl -F file=@report.xml.gz`) is read as one input per file part: handleFormUpload.
 */
async function handleUpload(ctx: ApiContext): Promise<void> {
  if (ctx.is("multipart/form-data")) return handleFormUpload(ctx);
  const limit = ctx.deps.config.maxReportBytes;
  if (ctx.request.length > limit) throw tooLarge(limit);
  let body: Awaited<ReturnType<typeof spool>>;
  try {
    body = await spool(ctx.req, limit);
  } catch (error) {
    if (error instanceof InputTooLargeError) throw tooLarge(limit);
    throw error;
  }
  if (body.byteLength === 0) {
    throw new ApiError(
      400,
      "invalid_body",
      "The body is empty; send a report file (XML, gzip, zip) or a mail.",
    );
  }
  const received = await receive(ctx, body, `upload:${ctx.state.requestId}`);
  await awaitProjection(ctx, received.lastPosition);
  ctx.status = 202;
  ctx.body = { status: "SUCCESS", ...describeReceived(received) };
}

const formExample =
  'curl -H "Authorization: Bearer $KEY" -F file=@report.xml.gz -F file=@report.eml $API/reports';

/**
 * A multipart/form-data upload, as `curl -F file=@FILE` sends it: each file part is one input,
 * received in order (archived, parsed, its reports stored), their bytes together within
 * MAX_REPORT_BYTES. 202 lists each input's outcome, as a raw upload gives it for its one.
 */
async function handleFormUpload(ctx: ApiContext): Promise<void> {
  const limit = ctx.deps.config.maxReportBytes;
  if (ctx.request.length > limit + multipartOverheadBytes) throw tooLarge(limit);
  let form: Awaited<ReturnType<typeof readFileParts>>;
  try {
    form = await readFileParts(ctx.req, limit);
  } catch (error) {
    if (!(error instanceof MultipartRefusal)) throw error;
    if (error.reason === "too_large") throw tooLarge(limit);
    throw new ApiError(400, "invalid_body", `The multipart body could not be read: ${error.message}.`, {
      Connection: "close",
    });
  }
  if (form.files.length === 0) {
    const fields = form.fieldNames.length ? ` (it has the fields ${form.fieldNames.join(", ")})` : "";
    throw new ApiError(
      400,
      "invalid_body",
      `The multipart body has no file part${fields}: send each report as a file, with @ before its path: ${formExample}`,
    );
  }
  const empty = form.files.find((file) => file.input.byteLength === 0);
  if (empty) {
    throw new ApiError(400, "invalid_body", `The file part ${partName(empty)} is empty.`);
  }
  const inputs = [];
  let lastPosition: bigint | null = null;
  for (const [index, file] of form.files.entries()) {
    const received = await receive(ctx, file.input, `upload:${ctx.state.requestId}#${index + 1}`);
    if (received.lastPosition !== null) lastPosition = received.lastPosition;
    inputs.push({ field: file.field, filename: file.filename, ...describeReceived(received) });
  }
  await awaitProjection(ctx, lastPosition);
  ctx.status = 202;
  ctx.body = { status: "SUCCESS", inputs };
}

const partName = (file: UploadedFile) => `"${file.field}"${file.filename ? ` (${file.filename})` : ""}`;

export const uploadReportsEndpoint: Endpoint = {
  name: "reports",
  method: "POST",
  scope: "ingest",
  summary:
    "Uploads one raw report file or mail as the body (XML, gzip, zip, message/rfc822; any content type), or several as the file parts of a multipart/form-data body (curl -F file=@FILE); 202 with the reports found.",
  handler: handleUpload,
};
