/** A validated period and page of a list endpoint ("List endpoints: parameters" in the contract). */
export interface PageQuery {
  tenantId: string;
  /** Unix seconds, inclusive. */
  start: number;
  /** Unix seconds, inclusive. */
  end: number;
  /** From 1. */
  page: number;
  perPage: number;
  /** Only this one of the tenant's domains and its subdomains' reports (the dashboard's filter). */
  domain?: string;
  /**
   * Only the sources of this sender, as aggregate_by_sender's Service names it (a service, a base
   * domain, an AS's organisation or "unknown"): read by aggregate_by_source and its unaligned
   * variant only.
   */
  sender?: string;
}

export interface Page<Record> {
  /** Records over all pages. */
  total: number;
  records: Record[];
}

export const offsetOf = (query: PageQuery) => (query.page - 1) * query.perPage;
