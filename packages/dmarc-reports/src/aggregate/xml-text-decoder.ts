import { TextDecoder } from "node:util";
/**
 * Bytes → text for the XML parser, recovering from what real reporters send: invalid UTF-8 (replaced by
 * U+FFFD) and characters XML forbids (dropped). Each kind of recovery is reported once, as a warning.
 */
export class XmlTextDecoder {
  private decoder: TextDecoder | null = null;
  private sawInvalidBytes = false;
  private sawControlChars = false;

  constructor(private readonly warn: (message: string) => void) {}

  decode(chunk: Uint8Array): string {
    this.decoder ??= this.decoderFor(chunk);
    return this.clean(this.decoder.decode(chunk, { stream: true }));
  }

  end(): string {
    return this.decoder ? this.clean(this.decoder.decode()) : "";
  }

  private decoderFor(head: Uint8Array): TextDecoder {
    const prolog = Buffer.from(head.subarray(0, 200)).toString("latin1");
    const label = /^\uFEFF?\s*<\?xml[^>]*encoding\s*=\s*["']([^"']+)["']/i.exec(prolog)?.[1]?.toLowerCase();
    if (label && label !== "utf-8" && label !== "utf8") {
      try {
        return new TextDecoder(label);
      } catch {
        this.warn(`recovered from invalid XML: unknown encoding "${label}", read as UTF-8`);
      }
    }
    return new TextDecoder("utf-8");
  }

  private clean(text: string): string {
    // One scan for the common case of clean text.
    if (!/[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFD\uFFFE\uFFFF]/.test(text)) return text;
    if (!this.sawInvalidBytes && text.includes("\uFFFD")) {
      this.sawInvalidBytes = true;
      this.warn("recovered from invalid UTF-8: bytes replaced by U+FFFD");
    }
    if (/[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/.test(text)) {
      if (!this.sawControlChars) {
        this.sawControlChars = true;
        this.warn("recovered from invalid XML: removed characters XML does not allow");
      }
      return text.replace(/[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/g, "");
    }
    return text;
  }
}
