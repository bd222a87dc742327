/** One event of a tenant's feed: the store's global position, as a decimal string. */
export interface FeedEntryTable {
  tenant_id: string;
  position: string;
}

/** One report event, by its report domain with the labels reversed (reversedDomain). */
export interface FeedReportTable {
  reversed_domain: string;
  position: string;
}

/** Who owned a domain at the projection's position: DomainAdded sets it, DomainRemoved drops it. */
export interface FeedDomainOwnerTable {
  domain: string;
  tenant_id: string;
}

/** Where a publisher to the broker stands: the last position it published (acknowledged). */
export interface FeedPublisherCheckpointTable {
  name: string;
  position: string;
}

export interface EventFeedSchema {
  feed_entry: FeedEntryTable;
  feed_report: FeedReportTable;
  feed_domain_owner: FeedDomainOwnerTable;
  feed_publisher_checkpoint: FeedPublisherCheckpointTable;
}
