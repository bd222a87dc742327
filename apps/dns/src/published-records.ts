import type { RecordedEvent } from "@dmarc-ledger/event-store";
import { decodeEvent } from "@dmarc-ledger/events";
import { toTxtStrings } from "@dmarc-ledger/safe-spf";
import { TYPE, txtRdata } from "./wire.js";
import { normalizeName, type RecordSet, type Zone } from "./zone.js";

export interface PublishedRecordsOptions {
  safeSpfZone: string;
  /** Where our rua/ruf mailboxes live; null serves no authorisation records. */
  reportsDomain: string | null;
  recordTtl: number;
  /** Told about events that could not be served (records outside the zone), then skipped. */
  onSkipped?: (event: RecordedEvent, reason: string) => void;
}

/** RFC 7489 §7.1: the record that agrees to receive a domain's reports at another domain. */
export function authorizationName(domain: string, reportsDomain: string): string {
  return `${normalizeName(domain)}._report._dmarc.${normalizeName(reportsDomain)}`;
}

/**
 * Keeps the zone equal to what the events say is published: each domain's Safe SPF records and,
 * for each domain a tenant has, its report authorisation record.
 *
 * A domain switching to a new set gets the new root and chained records in one step. Chained names
 * are versioned by content (packages/safe-spf/src/publish.ts), so the old set's chained records
 * never change; they stay served while a resolver may still walk the old chain: one TTL per chained
 * record after the switch (each link may be read just before the previous one expires). The time
 * is the event's, so every replica, and a replica rebuilt later, retires them at the same moment.
 */
export class PublishedRecords {
  /** The names each domain publishes now. */
  private readonly current = new Map<string, string[]>();
  /** Names no longer published, served until this time (ms). */
  private readonly retiring = new Map<string, number>();
  private readonly safeSpfZone: string;
  private readonly reportsDomain: string | null;
  private readonly authorization: RecordSet;

  constructor(
    private readonly zone: Zone,
    private readonly options: PublishedRecordsOptions,
  ) {
    this.safeSpfZone = normalizeName(options.safeSpfZone);
    this.reportsDomain = options.reportsDomain ? normalizeName(options.reportsDomain) : null;
    this.authorization = { ttl: options.recordTtl, rdatas: [txtRdata(["v=DMARC1"])] };
  }

  get domains(): number {
    return this.current.size;
  }

  get retiringNames(): number {
    return this.retiring.size;
  }

  apply(recorded: RecordedEvent): void {
    if (recorded.type === "DomainRemoved") {
      // Not in the catalogue yet; read loosely so that the zone follows it once it is.
      const domain = (recorded.data as { domain?: unknown } | null)?.domain;
      if (typeof domain === "string") this.removeDomain(domain, recorded.recordedAt.getTime());
      return;
    }
    if (recorded.type !== "DomainAdded" && recorded.type !== "SafeSpfRecordComputed") return;
    const event = decodeEvent(recorded);
    if (event?.type === "DomainAdded" && this.reportsDomain) {
      this.zone.set(authorizationName(event.data.domain, this.reportsDomain), TYPE.TXT, this.authorization);
    }
    if (event?.type === "SafeSpfRecordComputed") {
      const outside = event.data.records.find((record) => !this.inSafeSpfZone(record.name));
      if (outside) {
        this.options.onSkipped?.(recorded, `${outside.name} is not under ${this.safeSpfZone}`);
        return;
      }
      this.publish(event.data.domain, event.data.records, recorded.recordedAt.getTime());
    }
  }

  /** Stops serving retired names whose time has passed; returns how many. */
  sweep(now: number): number {
    let removed = 0;
    for (const [name, until] of this.retiring) {
      if (until > now) continue;
      this.retiring.delete(name);
      this.zone.set(name, TYPE.TXT, null);
      removed++;
    }
    return removed;
  }

  private inSafeSpfZone(name: string): boolean {
    const key = normalizeName(name);
    return key === this.safeSpfZone || key.endsWith(`.${this.safeSpfZone}`);
  }

  private publish(domain: string, records: { name: string; value: string }[], at: number): void {
    const names = records.map((record) => normalizeName(record.name));
    this.retire(domain, new Set(names), at);
    for (const record of records) {
      const name = normalizeName(record.name);
      this.retiring.delete(name);
      this.zone.set(name, TYPE.TXT, {
        ttl: this.options.recordTtl,
        rdatas: [txtRdata(toTxtStrings(record.value))],
      });
    }
    this.current.set(normalizeName(domain), names);
  }

  private removeDomain(domain: string, at: number): void {
    if (this.reportsDomain) this.zone.set(authorizationName(domain, this.reportsDomain), TYPE.TXT, null);
    this.retire(domain, new Set(), at);
    this.current.delete(normalizeName(domain));
  }

  private retire(domain: string, keep: Set<string>, at: number): void {
    const previous = this.current.get(normalizeName(domain)) ?? [];
    const until = at + this.options.recordTtl * 1000 * Math.max(1, previous.length - 1);
    for (const name of previous) {
      if (keep.has(name)) continue;
      this.retiring.set(name, Math.max(until, this.retiring.get(name) ?? 0));
    }
  }
}
