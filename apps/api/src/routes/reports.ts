import { type IngestedItem, InputTooLargeError, receiveInput, spool } from "@dmarc-ledger/intake";
import { ApiError, bodyTooLarge } from "../api-error.js";
import type { Endpoint } from "../endpoints.js";
import { awaitProjection } from "../read-your-writes.js";
import type { ApiContext } from "../state.js";

const tooLarge = (limit: number) => bodyTooLarge("Report bodies", limit, "MAX_REPORT_BYTES");

/** One entry per report found, or one for an input that could not be read (kept with the reason). */
function describeItem(item: IngestedItem) {
  switch (item.kind) {
    case "aggregate":
      return { ...item };
    case "failure":
      return { ...item, rows: null, messages: null, dropped: null };
    case "rejected":
      return { kind: item.kind, code: item.code, reason: item.reason, status: item.status };
  }
}

/**
 * POST /api/reports: a raw report file or mail as the body, whatever its content type. The body
 * streams into the archive (hashed and compressed as it arrives, never more than the limit read);
 * 202 goes out only once the input and its reports are committed.
 */
async function handleUpload(ctx: ApiContext): Promise<void> {
  const holder = ctx.state.holder!;
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
  const received = await receiveInput(
    {
      store: ctx.deps.store,
      db: ctx.deps.db,
      archiveMaxBytes: ctx.deps.config.archiveMaxBytes,
      parseOptions: { maxDecompressedBytes: ctx.deps.config.maxDecompressedBytes },
      parseThreads: ctx.deps.config.parseThreads,
      metrics: ctx.deps.metrics?.intake,
    },
    body,
    {
      channel: "upload",
      source: `upload:${ctx.state.requestId}`,
      // The sender sees its upload in its inputs, even when no report in it names its domains.
      tenantId: holder.tenantId,
      metadata: { causedBy: holder.causedBy, correlationId: ctx.state.requestId },
    },
  );
  await awaitProjection(ctx, received.lastPosition);
  ctx.status = 202;
  ctx.body = {
    status: "SUCCESS",
    sha256: received.sha256,
    bytes: received.size,
    archive: received.archive,
    outcome: received.status,
    // The rows its reports left out, in all; each aggregate item says which and why.
    rowsDropped: received.dropped.rows,
    items: received.items.map(describeItem),
  };
}

export const uploadReportsEndpoint: Endpoint = {
  name: "reports",
  method: "POST",
  scope: "ingest",
  summary:
    "Uploads one raw report file or mail (XML, gzip, zip, message/rfc822; any content type); 202 with the reports found.",
  handler: handleUpload,
};
