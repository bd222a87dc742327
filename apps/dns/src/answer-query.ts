import type { Packet } from "dns2";
import {
  BADVERS,
  CLASS_IN,
  encodeName,
  encodeResponse,
  HEADER_BYTES,
  type OutRecord,
  RCODE,
  type ResponseParts,
  responseBytes,
  TYPE,
} from "./wire.js";
import { normalizeName, type Zone } from "./zone.js";

const CLASS_ANY = 255;
const TYPE_IXFR = 251;
/** A UDP answer without EDNS(0) never exceeds this (RFC 1035 §4.2.1). */
const CLASSIC_UDP_BYTES = 512;

export interface AnswerOptions {
  transport: "udp" | "tcp";
  /** The largest UDP answer we send, whatever size the requester offers (RFC 6891 §6.2.5). */
  maxUdpPayload: number;
}

/**
 * The answer to one query, in wire format, or null when the packet is to be dropped (a response,
 * or a query we could not read). Everything comes from the in-memory zone.
 */
export function answerQuery(zone: Zone, request: Packet, options: AnswerOptions): Buffer | null {
  const { header } = request;
  if (header.qr) return null;
  const question = request.questions[0];
  // dns2 skips what it cannot decode: a count that disagrees means the question was unreadable.
  if (header.qdcount !== 1 || request.questions.length !== 1 || !question) return null;
  if (typeof question.name !== "string" || typeof question.type !== "number") return null;
  let questionName: Buffer;
  try {
    questionName = encodeName(question.name);
  } catch {
    return null;
  }
  const optRecords = request.additionals.filter((record) => record?.type === TYPE.OPT);
  const opt = optRecords[0];
  const udpLimit = opt
    ? Math.min(Math.max(opt.class ?? 0, CLASSIC_UDP_BYTES), options.maxUdpPayload)
    : CLASSIC_UDP_BYTES;
  const parts: ResponseParts = {
    id: header.id,
    opcode: header.opcode,
    rd: !!header.rd,
    cd: !!(header as { cd?: number }).cd,
    aa: false,
    tc: false,
    rcode: RCODE.NOERROR,
    question: { name: questionName, type: question.type, class: question.class },
    answers: [],
    authorities: [],
    edns: opt ? { udpPayloadSize: options.maxUdpPayload, doBit: ((opt.ttl ?? 0) & 0x8000) !== 0 } : null,
  };
  const finish = (rcode: number) => encodeResponse({ ...parts, rcode });

  if (optRecords.length > 1) return finish(RCODE.FORMERR); // RFC 6891 §6.1.1
  if (opt && ((opt.ttl ?? 0) >>> 16) & 0xff) return finish(BADVERS);
  if (header.opcode !== 0) return finish(RCODE.NOTIMP);
  if (question.class !== CLASS_IN && question.class !== CLASS_ANY) return finish(RCODE.REFUSED);
  if (question.type === TYPE.AXFR || question.type === TYPE_IXFR) return finish(RCODE.REFUSED);

  const name = normalizeName(question.name);
  const found = zone.lookup(name, question.type);
  if (found.kind === "refused") return finish(RCODE.REFUSED);
  parts.aa = true;
  if (found.kind === "answer") {
    parts.answers = found.sets.flatMap(({ type, set }) =>
      set.rdatas.map((rdata): OutRecord => ({ owner: HEADER_BYTES, type, ttl: set.ttl, rdata })),
    );
  } else {
    // RFC 2308: the zone's SOA in the authority section, owned by the apex, which ends the
    // question's name: point into it.
    const apexOffset = HEADER_BYTES + (name.length - found.apex.name.length);
    parts.authorities = [
      { owner: apexOffset, type: TYPE.SOA, ttl: found.apex.negativeTtl, rdata: found.apex.soa.rdatas[0]! },
    ];
  }
  const rcode = found.kind === "nxdomain" ? RCODE.NXDOMAIN : RCODE.NOERROR;
  if (options.transport === "udp" && responseBytes({ ...parts, rcode }) > udpLimit) {
    // RFC 2181 §9: rather than a partial RRset, none at all and TC, so the resolver asks over TCP.
    return encodeResponse({ ...parts, rcode, tc: true, answers: [], authorities: [] });
  }
  return finish(rcode);
}
