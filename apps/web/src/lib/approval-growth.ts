import type { Query } from "../api/client.js";
import type { ListAnswer, SenderApprovalRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { formatCount } from "./format.js";

/** The approved services, by "domain|service", that group addresses they did not when approved. */
const grownApprovals = (answer: ListAnswer<SenderApprovalRecord> | undefined) =>
  new Map(
    (answer?.records ?? [])
      .filter((d) => d.Kind === "service" && d.Approved && (d.AddedCount ?? 0) > 0)
      .map((d) => [`${d.Domain}|${d.Sender}`, d]),
  );

/** "3 addresses added since approval". */
export const addedText = (count: number) =>
  `${formatCount(count)} ${count === 1 ? "address" : "addresses"} added since approval`;

/**
 * The approved services of the period that gained addresses since approval (GET
 * sender_approvals), by "domain|service"; none when the API does not link the endpoint.
 */
export function useGrownApprovals(linked: boolean, query: Query): Map<string, SenderApprovalRecord> {
  const decisions = useApi<ListAnswer<SenderApprovalRecord>>(linked ? "sender_approvals" : null, {
    ...query,
    per_page: 1000,
  });
  return grownApprovals(decisions.data);
}
