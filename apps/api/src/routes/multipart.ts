import type { IncomingMessage } from "node:http";
import { InputTooLargeError, type SpooledInput, spool } from "@dmarc-ledger/intake";
import { Busboy } from "@fastify/busboy";

/** One file part of a multipart/form-data upload, read as one input. */
export interface UploadedFile {
  /** The form field's name (`file` in `curl -F file=@report.xml.gz`). */
  field: string;
  /** The file name the client gave, if any. */
  filename: string | null;
  input: SpooledInput;
}

/** Why a multipart body was not read: its file bytes passed the limit, or it is not well formed. */
export class MultipartRefusal extends Error {
  override readonly name = "MultipartRefusal";
  constructor(
    readonly reason: "too_large" | "too_many_files" | "malformed",
    message: string,
  ) {
    super(message);
  }
}

/** File parts one request may carry: each is an input of its own, archived and parsed. */
export const maxFilesPerUpload = 100;

/**
 * What the body may hold beyond its files' bytes: boundaries, part headers and a few small
 * fields. The request as a whole is cut off past the limit plus this.
 */
export const multipartOverheadBytes = 1024 * 1024;

/**
 * Reads a multipart/form-data request: each file part is spooled as it arrives (hashed and
 * compressed: spool), in order; their bytes together at most `limit`, at most maxFilesPerUpload
 * of them; other fields are read and dropped, within small limits, and only their names kept.
 * Nothing beyond the limits is read into memory. @fastify/busboy parses the parts.
 */
export function readFileParts(
  request: IncomingMessage,
  limit: number,
): Promise<{ files: UploadedFile[]; fieldNames: string[] }> {
  return new Promise((resolve, reject) => {
    const files: Promise<UploadedFile>[] = [];
    const fieldNames: string[] = [];
    let fileBytes = 0;
    let bodyBytes = 0;
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      request.unpipe(parser);
      // Whatever the parts left pending fails with the request: nothing waits on them.
      for (const file of files) file.catch(() => {});
      reject(error);
    };
    const tooLarge = () => new MultipartRefusal("too_large", `the files are larger than ${limit} bytes`);

    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({
        headers: request.headers as { "content-type": string },
        limits: {
          files: maxFilesPerUpload,
          fileSize: limit,
          fields: 20,
          fieldSize: 4096,
          fieldNameSize: 200,
          parts: maxFilesPerUpload + 20,
          headerPairs: 20,
        },
      });
    } catch (error) {
      // No boundary in the Content-Type, say.
      reject(new MultipartRefusal("malformed", error instanceof Error ? error.message : String(error)));
      return;
    }

    async function* counted(stream: AsyncIterable<Uint8Array>) {
      for await (const chunk of stream) {
        fileBytes += chunk.byteLength;
        if (fileBytes > limit) throw tooLarge();
        yield chunk;
      }
    }

    parser.on("file", (field, stream, filename) => {
      if (settled) {
        stream.resume();
        return;
      }
      const spooled = spool(counted(stream), limit).then(
        (input) => ({ field, filename: filename || null, input }),
        (error: unknown) => {
          throw error instanceof InputTooLargeError ? tooLarge() : error;
        },
      );
      spooled.catch(fail);
      files.push(spooled);
    });
    parser.on("field", (name) => {
      fieldNames.push(name);
    });
    parser.on("filesLimit", () =>
      fail(new MultipartRefusal("too_many_files", `one upload takes at most ${maxFilesPerUpload} files`)),
    );
    parser.on("partsLimit", () => fail(new MultipartRefusal("malformed", "too many parts")));
    parser.on("fieldsLimit", () => fail(new MultipartRefusal("malformed", "too many fields")));
    parser.on("error", (error: unknown) =>
      fail(new MultipartRefusal("malformed", error instanceof Error ? error.message : String(error))),
    );
    parser.on("finish", () => {
      Promise.all(files).then((read) => {
        if (settled) return;
        settled = true;
        resolve({ files: read, fieldNames });
      }, fail);
    });
    request.on("data", (chunk: Buffer) => {
      bodyBytes += chunk.byteLength;
      if (bodyBytes > limit + multipartOverheadBytes) fail(tooLarge());
    });
    request.on("error", fail);
    request.pipe(parser);
  });
}
