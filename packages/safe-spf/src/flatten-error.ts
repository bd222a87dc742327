export type SpfFlattenErrorCode =
  | "lookup_limit"
  | "record_too_large"
  | "loop"
  | "dns_timeout"
  | "no_spf_record"
  | "syntax"
  | "unflattenable";

/** Why a record cannot be flattened into a published set that gives the same verdicts. */
export class SpfFlattenError extends Error {
  constructor(
    readonly code: SpfFlattenErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "SpfFlattenError";
  }
}
