import { encodeName, type SoaFields, soaRdata, TYPE } from "./wire.js";

/** The records of one name and type, RDATA already in wire format. */
export interface RecordSet {
  ttl: number;
  rdatas: Buffer[];
}

export interface ZoneApex {
  /** Lower case, no trailing dot. */
  name: string;
  soa: Omit<SoaFields, "serial">;
  soaTtl: number;
  nameServers: string[];
  nsTtl: number;
  /** Other records at the apex (the reports domain's MX). */
  extra?: { type: number; set: RecordSet }[];
}

export type Lookup =
  | { kind: "refused" }
  | { kind: "answer"; apex: ZoneApexState; sets: { type: number; set: RecordSet }[] }
  | { kind: "nodata"; apex: ZoneApexState }
  | { kind: "nxdomain"; apex: ZoneApexState };

export interface ZoneApexState {
  name: string;
  /** The SOA's RDATA, rebuilt when the serial moves. */
  soa: RecordSet;
  /** RFC 2308 §3: negative answers are cached for min(SOA TTL, SOA minimum). */
  negativeTtl: number;
  fields: Omit<SoaFields, "serial">;
  soaTtl: number;
}

interface NameNode {
  sets: Map<number, RecordSet>;
  /** Names below this one: a name with descendants exists even without records (RFC 8020). */
  descendants: number;
}

export const normalizeName = (name: string) => (name.endsWith(".") ? name.slice(0, -1) : name).toLowerCase();

/**
 * The names we answer for, in memory: one map from name to its record sets, shared by every zone
 * we are authoritative for. Every change is one synchronous step, so a query sees a zone either
 * before or after an event, never half of one.
 */
export class Zone {
  private readonly nodes = new Map<string, NameNode>();
  private readonly apexes: ZoneApexState[];
  private serial: number;

  constructor(apexes: ZoneApex[], serial = 1) {
    this.serial = serial;
    // Longest first: with nested zones a name belongs to the deepest apex above it.
    this.apexes = [...apexes]
      .sort((a, b) => b.name.length - a.name.length)
      .map((apex) => ({
        name: normalizeName(apex.name),
        fields: apex.soa,
        soaTtl: apex.soaTtl,
        soa: { ttl: apex.soaTtl, rdatas: [] },
        negativeTtl: Math.min(apex.soaTtl, apex.soa.minimum),
      }));
    for (const apex of apexes) {
      const name = normalizeName(apex.name);
      this.set(name, TYPE.NS, {
        ttl: apex.nsTtl,
        rdatas: apex.nameServers.map((server) => encodeName(normalizeName(server))),
      });
      for (const extra of apex.extra ?? []) this.set(name, extra.type, extra.set);
    }
    this.setSerial(serial);
  }

  /** The SOA serial: moved as the zone follows the event store, so secondaries could see change. */
  setSerial(serial: number): void {
    this.serial = serial >>> 0;
    for (const apex of this.apexes) {
      apex.soa.rdatas = [soaRdata({ ...apex.fields, serial: this.serial })];
      this.set(apex.name, TYPE.SOA, apex.soa);
    }
  }

  get size(): number {
    return this.nodes.size;
  }

  apexOf(name: string): ZoneApexState | null {
    for (const apex of this.apexes) {
      if (
        name === apex.name ||
        (name.endsWith(apex.name) && name[name.length - apex.name.length - 1] === ".")
      ) {
        return apex;
      }
    }
    return null;
  }

  /** Sets (or with null, removes) the records of one name and type. The name must be in a zone. */
  set(name: string, type: number, set: RecordSet | null): void {
    const key = normalizeName(name);
    const apex = this.apexOf(key);
    if (!apex) throw new Error(`${name} is in none of our zones`);
    let node = this.nodes.get(key);
    if (set) {
      if (!node) {
        node = { sets: new Map(), descendants: 0 };
        this.nodes.set(key, node);
      }
      if (node.sets.size === 0) this.countInAncestors(key, apex.name, 1);
      node.sets.set(type, set);
      return;
    }
    if (!node?.sets.delete(type) || node.sets.size > 0) return;
    this.countInAncestors(key, apex.name, -1);
    if (node.descendants === 0) this.nodes.delete(key);
  }

  has(name: string, type: number): boolean {
    return this.nodes.get(normalizeName(name))?.sets.has(type) ?? false;
  }

  lookup(name: string, type: number): Lookup {
    const apex = this.apexOf(name);
    if (!apex) return { kind: "refused" };
    const node = this.nodes.get(name);
    if (!node) return { kind: "nxdomain", apex };
    if (type === TYPE.ANY) {
      const sets = [...node.sets].map(([setType, set]) => ({ type: setType, set }));
      return sets.length > 0 ? { kind: "answer", apex, sets } : { kind: "nodata", apex };
    }
    const set = node.sets.get(type);
    return set ? { kind: "answer", apex, sets: [{ type, set }] } : { kind: "nodata", apex };
  }

  /**
   * A name with records counts in every ancestor up to its apex, so that an ancestor without
   * records of its own still exists (an empty non-terminal: NODATA, not NXDOMAIN; RFC 8020).
   */
  private countInAncestors(name: string, apex: string, change: 1 | -1): void {
    for (let parent = parentOf(name, apex); parent !== null; parent = parentOf(parent, apex)) {
      let above = this.nodes.get(parent);
      if (!above) {
        above = { sets: new Map(), descendants: 0 };
        this.nodes.set(parent, above);
      }
      above.descendants += change;
      if (above.descendants === 0 && above.sets.size === 0) this.nodes.delete(parent);
    }
  }
}

function parentOf(name: string, apex: string): string | null {
  if (name === apex) return null;
  const dot = name.indexOf(".");
  return dot < 0 ? null : name.slice(dot + 1);
}
