import { ReportParseError } from "../errors.js";
import { type Limits, RATIO_GRACE_BYTES } from "../options.js";

/** Checks one decompression layer against the size and ratio limits as its output grows. */
export class OutputBudget {
  private produced = 0;

  constructor(
    private readonly limits: Limits,
    private readonly what: string,
  ) {}

  add(outputBytes: number, inputBytesSoFar: number): void {
    this.produced += outputBytes;
    if (this.produced > this.limits.maxDecompressedBytes) {
      throw new ReportParseError(
        "decompressed_too_large",
        `${this.what} decompresses to more than the limit of ${this.limits.maxDecompressedBytes} bytes`,
      );
    }
    if (
      this.produced > RATIO_GRACE_BYTES &&
      this.produced > inputBytesSoFar * this.limits.maxCompressionRatio
    ) {
      throw new ReportParseError(
        "compression_ratio_exceeded",
        // No byte counts: they depend on how zlib's output falls into chunks, and one input gets one answer.
        `${this.what} expands more than ${this.limits.maxCompressionRatio} times`,
      );
    }
  }

  get total(): number {
    return this.produced;
  }
}
