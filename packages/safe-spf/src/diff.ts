import type { FlattenResult } from "./flatten.js";
import { IpSet, parseCidr } from "./ip-networks.js";

/** Networks the published set passes now and did not before, and the reverse, for the change history. */
export function diffFlattenResults(
  before: FlattenResult | null,
  after: FlattenResult,
): { added: string[]; removed: string[] } {
  const previous = IpSet.of((before?.networks ?? []).map(parseCidr));
  const current = IpSet.of(after.networks.map(parseCidr));
  return { added: current.minus(previous).toCidrs(), removed: previous.minus(current).toCidrs() };
}
