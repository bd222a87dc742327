/**
 * The few pieces of DNS wire format (RFC 1035 §4.1) our answers need. Queries are decoded by
 * dns2 (its servers parse every request); answers are encoded here because dns2's writer keeps
 * one array entry per bit: a 512-byte answer costs it about 1 ms, this about 2 µs.
 */

export const TYPE = { A: 1, NS: 2, SOA: 6, MX: 15, TXT: 16, AAAA: 28, OPT: 41, AXFR: 252, ANY: 255 } as const;
export const CLASS_IN = 1;
export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
/** RFC 6891 §9: extended RCODE 16, an EDNS version we do not speak. */
export const BADVERS = 16;

export const HEADER_BYTES = 12;
/** An OPT record without options: root name, type, class, TTL, RDLENGTH. */
export const OPT_RECORD_BYTES = 11;
/** An answer record's fixed part after its (compressed, 2-byte) owner: type, class, TTL, RDLENGTH. */
export const RECORD_FIXED_BYTES = 10;

/**
 * A name in wire format, uncompressed. Labels are taken byte for byte (latin1), as dns2 decodes
 * them, so the question we echo is the one we were sent.
 */
export function encodeName(name: string): Buffer {
  const trimmed = name.endsWith(".") ? name.slice(0, -1) : name;
  if (trimmed === "") return Buffer.from([0]);
  const labels = trimmed.split(".");
  const out = Buffer.alloc(Buffer.byteLength(trimmed, "latin1") + 2);
  let offset = 0;
  for (const label of labels) {
    const length = Buffer.byteLength(label, "latin1");
    if (length === 0 || length > 63) throw new Error(`"${name}" has a label of ${length} bytes`);
    out[offset++] = length;
    offset += out.write(label, offset, "latin1");
  }
  out[offset] = 0;
  if (out.length > 255) throw new Error(`"${name}" is longer than 255 bytes in wire format`);
  return out;
}

/** TXT RDATA: each character-string with its length byte. */
export function txtRdata(strings: readonly string[]): Buffer {
  return Buffer.concat(
    strings.map((text) => {
      const bytes = Buffer.from(text, "utf8");
      if (bytes.length > 255) throw new Error("a TXT character-string is at most 255 bytes");
      return Buffer.concat([Buffer.from([bytes.length]), bytes]);
    }),
  );
}

export interface SoaFields {
  primary: string;
  admin: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

export function soaRdata(soa: SoaFields): Buffer {
  const numbers = Buffer.alloc(20);
  [soa.serial, soa.refresh, soa.retry, soa.expire, soa.minimum].forEach((value, index) => {
    numbers.writeUInt32BE(value >>> 0, index * 4);
  });
  return Buffer.concat([encodeName(soa.primary), encodeName(soa.admin), numbers]);
}

export function mxRdata(preference: number, exchange: string): Buffer {
  const head = Buffer.alloc(2);
  head.writeUInt16BE(preference);
  return Buffer.concat([head, encodeName(exchange)]);
}

/** One resource record to write: its owner as an offset into the question's name, or a wire name. */
export interface OutRecord {
  /** Byte offset of the owner within the message (a compression pointer), or its wire name. */
  owner: number | Buffer;
  type: number;
  ttl: number;
  rdata: Buffer;
}

export interface ResponseParts {
  id: number;
  opcode: number;
  rd: boolean;
  cd: boolean;
  aa: boolean;
  tc: boolean;
  rcode: number;
  /** The question as asked: wire name, type and class. Absent for a FORMERR without one. */
  question: { name: Buffer; type: number; class: number } | null;
  answers: readonly OutRecord[];
  authorities: readonly OutRecord[];
  /** Our UDP payload size when the query carried EDNS(0); null without EDNS. */
  edns: { udpPayloadSize: number; doBit: boolean } | null;
}

function recordBytes(record: OutRecord): number {
  return (
    (typeof record.owner === "number" ? 2 : record.owner.length) + RECORD_FIXED_BYTES + record.rdata.length
  );
}

export function responseBytes(parts: ResponseParts): number {
  let size = HEADER_BYTES;
  if (parts.question) size += parts.question.name.length + 4;
  for (const record of parts.answers) size += recordBytes(record);
  for (const record of parts.authorities) size += recordBytes(record);
  if (parts.edns) size += OPT_RECORD_BYTES;
  return size;
}

export function encodeResponse(parts: ResponseParts): Buffer {
  const out = Buffer.alloc(responseBytes(parts));
  out.writeUInt16BE(parts.id, 0);
  // QR, opcode, AA, TC, RD | RA (0: we do not recurse), Z, AD (0), CD, RCODE (low 4 bits).
  out[2] = 0x80 | ((parts.opcode & 0xf) << 3) | (parts.aa ? 4 : 0) | (parts.tc ? 2 : 0) | (parts.rd ? 1 : 0);
  out[3] = (parts.cd ? 0x10 : 0) | (parts.rcode & 0xf);
  out.writeUInt16BE(parts.question ? 1 : 0, 4);
  out.writeUInt16BE(parts.answers.length, 6);
  out.writeUInt16BE(parts.authorities.length, 8);
  out.writeUInt16BE(parts.edns ? 1 : 0, 10);
  let offset = HEADER_BYTES;
  if (parts.question) {
    offset += parts.question.name.copy(out, offset);
    offset = out.writeUInt16BE(parts.question.type, offset);
    offset = out.writeUInt16BE(parts.question.class, offset);
  }
  for (const record of [...parts.answers, ...parts.authorities]) {
    if (typeof record.owner === "number") offset = out.writeUInt16BE(0xc000 | record.owner, offset);
    else offset += record.owner.copy(out, offset);
    offset = out.writeUInt16BE(record.type, offset);
    offset = out.writeUInt16BE(CLASS_IN, offset);
    offset = out.writeUInt32BE(record.ttl >>> 0, offset);
    offset = out.writeUInt16BE(record.rdata.length, offset);
    offset += record.rdata.copy(out, offset);
  }
  if (parts.edns) {
    out[offset++] = 0; // root owner
    offset = out.writeUInt16BE(TYPE.OPT, offset);
    offset = out.writeUInt16BE(parts.edns.udpPayloadSize, offset);
    // TTL: extended RCODE (high 8 bits of 12), version 0, DO echoed (RFC 3225), Z.
    out[offset++] = (parts.rcode >> 4) & 0xff;
    out[offset++] = 0;
    out[offset++] = parts.edns.doBit ? 0x80 : 0;
    out[offset++] = 0;
    offset = out.writeUInt16BE(0, offset);
  }
  return out;
}
