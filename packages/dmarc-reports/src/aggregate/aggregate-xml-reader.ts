import { hostNameOf } from "@dmarc-ledger/domain-names";
import type { SaxesTag } from "saxes";
import { DroppedRowTally, describeDropped } from "../dropped-rows.js";
import { ReportParseError } from "../errors.js";
import { identityOf } from "../identity.js";
import {
  type Limits,
  MAX_DATE_RANGE_SECONDS,
  MAX_FIELD_CHARS,
  MAX_REPORT_MESSAGES,
  MAX_RESULTS_PER_ROW,
  MAX_TIMESTAMP,
  MAX_XML_NODE_CHARS,
} from "../options.js";
import type {
  AggregateHeader,
  AggregateRow,
  DkimAuthResult,
  DroppedRowReason,
  PolicyOverrideReason,
  PolicyPublished,
  ReportItem,
  SpfAuthResult,
} from "../types.js";
import { El, elementCode, isContainer } from "./element-codes.js";
import { arcOf, normaliseIp, normaliseReportId, organizationOf } from "./normalise.js";
import { SlottedSaxesParser } from "./saxes-parser.js";
import { XmlTextDecoder } from "./xml-text-decoder.js";

const DMARC_2_NAMESPACE = "urn:ietf:params:xml:ns:dmarc-2.0";
const DRAFT_NAMESPACE = "http://dmarc.org/dmarc-xml/0.1";
/** A broken 200 MB file must not grow an unbounded warning list. */
const MAX_XML_WARNINGS = 20;
const MAX_DROPPED_ROW_WARNINGS = 100;
/** Bytes handed to the XML parser at once: the node guard is checked between pieces. */
const PIECE_BYTES = 64 * 1024;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

interface RowDraft {
  sourceIp: string | null;
  count: string | null;
  disposition: string;
  policyDkim: string;
  policySpf: string;
  reasons: PolicyOverrideReason[];
  headerFrom: string;
  envelopeFrom: string | null;
  envelopeTo: string | null;
  dkim: DkimAuthResult[];
  spf: SpfAuthResult[];
  /** The first field of the row that held an entity reference the parser left unexpanded. */
  entityIn: string | null;
}

function orNull(value: string): string | null {
  return value === "" ? null : value;
}

/**
 * Push-style reader of one aggregate report: feed it bytes, take the items it has ready.
 * It keeps one row and one batch in memory, never the report, so memory does not grow with the input.
 * Parsing goes on past XML errors (saxes reports them and carries on); each becomes a warning.
 */
export class AggregateXmlReader {
  private readonly parser = new SlottedSaxesParser({ position: false });
  private readonly decoder: XmlTextDecoder;
  private readonly ready: ReportItem[] = [];
  private readonly warnings: string[] = [];
  private xmlErrors = 0;
  private readonly dropped = new DroppedRowTally();
  private keptRows = 0;
  /**
   * The parser met an entity it does not know (DTDs are never read, so every entity but the five
   * of XML) in the text it is about to hand over; `fieldHasEntity`: the field being read holds one.
   */
  private entityPending = false;
  private fieldHasEntity = false;
  private readonly stack: number[] = [];
  /** The tag names of `stack`, as written: a refusal names the field it is about. */
  private readonly names: string[] = [];
  private text = "";
  private collecting = false;
  /** Characters given to the parser since it last completed a node: what it holds buffered. */
  private charsSinceNode = 0;
  private messages = 0;

  private sawFeedback = false;
  private sawElement = false;
  private version = "";
  private namespaceHint: "rfc9990" | "draft" | null = null;
  private orgName = "";
  private email = "";
  private reportId = "";
  private begin = "";
  private end = "";
  private readonly policy: PolicyPublished = {
    domain: "",
    adkim: null,
    aspf: null,
    p: null,
    sp: null,
    np: null,
    pct: null,
    fo: null,
    testing: null,
    discoveryMethod: null,
  };
  private header: AggregateHeader | null = null;

  private row: RowDraft | null = null;
  private rowNumber = 0;
  /** Reasons and auth results of the row being read: a row is held whole until it closes. */
  private rowLists = 0;
  private reason: PolicyOverrideReason | null = null;
  private dkim: DkimAuthResult | null = null;
  private spf: SpfAuthResult | null = null;
  private batch: AggregateRow[] = [];

  constructor(private readonly limits: Limits) {
    this.decoder = new XmlTextDecoder((message) => this.warnings.push(message));
    const completed = () => {
      this.charsSinceNode = 0;
    };
    this.parser.on("error", (error) => this.onXmlError(error));
    this.parser.on("doctype", () => {
      completed();
      this.warnings.push("ignored a DTD: entities are never resolved");
    });
    this.parser.on("comment", completed);
    this.parser.on("processinginstruction", completed);
    this.parser.on("opentag", (tag) => {
      completed();
      // An entity in an attribute value: attributes are no fields.
      this.entityPending = false;
      this.onOpen(tag);
    });
    this.parser.on("closetag", () => {
      completed();
      this.onClose();
    });
    this.parser.on("text", (text) => {
      completed();
      if (this.collecting) {
        if (this.entityPending) this.fieldHasEntity = true;
        this.collect(text);
      }
      this.entityPending = false;
    });
    this.parser.on("cdata", (text) => {
      completed();
      if (this.collecting) this.collect(text);
    });
  }

  /** Feeds bytes; returns the items completed so far. */
  write(chunk: Uint8Array): ReportItem[] {
    // In pieces, so that a node growing past the limit is caught within a piece of it.
    for (let offset = 0; offset < chunk.length; offset += PIECE_BYTES) {
      this.feed(this.decoder.decode(chunk.subarray(offset, offset + PIECE_BYTES)));
    }
    return this.ready.splice(0);
  }

  private feed(text: string): void {
    this.charsSinceNode += text.length;
    this.parser.write(text);
    if (this.charsSinceNode > MAX_XML_NODE_CHARS) {
      throw new ReportParseError(
        "xml_node_too_long",
        `an XML node (text, comment, CDATA, attribute or DTD) runs past ${MAX_XML_NODE_CHARS} characters`,
      );
    }
  }

  private collect(text: string): void {
    if (this.text.length + text.length > MAX_FIELD_CHARS) {
      throw new ReportParseError(
        "field_too_long",
        `${this.fieldPath()} is longer than ${MAX_FIELD_CHARS} characters`,
      );
    }
    this.text += text;
  }

  /** Ends the input; returns the last items, ending with "aggregate-end". */
  finish(): ReportItem[] {
    const rest = this.decoder.end();
    if (rest) this.feed(rest);
    this.parser.close();
    if (!this.sawFeedback) {
      throw this.xmlErrors > 0
        ? new ReportParseError(
            "malformed_xml",
            `no <feedback> element could be read: ${this.warnings[0] ?? ""}`,
          )
        : new ReportParseError("not_a_report", "XML without a <feedback> element is not a DMARC report");
    }
    this.emitHeader();
    this.flushRows();
    const droppedRows = this.dropped.total;
    if (droppedRows > MAX_DROPPED_ROW_WARNINGS) {
      this.warnings.push(`dropped ${droppedRows - MAX_DROPPED_ROW_WARNINGS} more rows`);
    }
    if (droppedRows > 0 && this.keptRows === 0) {
      // Stored, it would be a report of no rows that says nothing of what it held.
      throw new ReportParseError(
        "no_valid_rows",
        `every row of the report was dropped: ${describeDropped(this.dropped.list())}`,
      );
    }
    if (this.xmlErrors > MAX_XML_WARNINGS) {
      this.warnings.push(`recovered from invalid XML: ${this.xmlErrors - MAX_XML_WARNINGS} more errors`);
    }
    this.ready.push({ kind: "aggregate-end", warnings: this.warnings, dropped: this.dropped.list() });
    return this.ready.splice(0);
  }

  private onXmlError(error: Error): void {
    if (error.message.startsWith("undefined entity")) this.entityPending = true;
    this.xmlErrors++;
    if (this.xmlErrors <= MAX_XML_WARNINGS) {
      this.warnings.push(`recovered from invalid XML: ${error.message.replace(/\.$/, "")}`);
    }
  }

  private onOpen(tag: SaxesTag): void {
    const code = elementCode(tag.name);
    const parent = this.stack.length > 0 ? this.stack[this.stack.length - 1]! : El.other;
    if (!this.sawElement) {
      this.sawElement = true;
      // Fail fast on HTML error pages instead of reading them to the end.
      if (tag.name.toLowerCase() === "html")
        throw new ReportParseError("not_a_report", "input is HTML, not a report");
    }
    if ((code === El.reason || code === El.dkim || code === El.spf) && this.row) {
      if (++this.rowLists > MAX_RESULTS_PER_ROW) {
        throw new ReportParseError(
          "too_many_results",
          `row ${this.rowNumber} holds more than ${MAX_RESULTS_PER_ROW} reasons and auth results`,
        );
      }
    }
    switch (code) {
      case El.feedback:
        this.sawFeedback = true;
        this.noteNamespaces(tag);
        break;
      case El.schema:
        this.noteNamespaces(tag);
        break;
      case El.record:
        this.emitHeader();
        this.rowLists = 0;
        this.rowNumber++;
        this.row = {
          sourceIp: null,
          count: null,
          disposition: "",
          policyDkim: "",
          policySpf: "",
          reasons: [],
          headerFrom: "",
          envelopeFrom: null,
          envelopeTo: null,
          dkim: [],
          spf: [],
          entityIn: null,
        };
        break;
      case El.reason:
        if (parent === El.policyEvaluated) this.reason = { type: "", comment: null };
        break;
      case El.dkim:
        if (parent === El.authResults)
          this.dkim = { domain: "", selector: null, result: "", humanResult: null };
        break;
      case El.spf:
        if (parent === El.authResults) this.spf = { domain: "", scope: null, result: "" };
        break;
    }
    this.stack.push(code);
    this.names.push(tag.name);
    this.text = "";
    this.fieldHasEntity = false;
    this.collecting =
      !isContainer(code) && !((code === El.dkim || code === El.spf) && parent === El.authResults);
  }

  /**
   * The field being read, as its elements below <feedback> or <record> (the last four, each cut
   * at 40 characters: an input may nest without end), and its record: `<auth_results><dkim><selector>
   * of record 3`. One element name alone does not say which of a report's domains it is.
   */
  private fieldPath(withRecord = true): string {
    let from = 0;
    for (let i = this.stack.length - 1; i >= 0; i--) {
      if (this.stack[i] === El.record || this.stack[i] === El.feedback) {
        from = i + 1;
        break;
      }
    }
    const path = this.names
      .slice(Math.max(from, this.names.length - 4))
      .map((name) => `<${name.slice(0, 40)}>`)
      .join("");
    return this.row && withRecord ? `${path} of record ${this.rowNumber}` : path;
  }

  private noteNamespaces(tag: SaxesTag): void {
    for (const attribute of Object.values(tag.attributes)) {
      const value = typeof attribute === "string" ? attribute : attribute.value;
      if (value === DMARC_2_NAMESPACE) this.namespaceHint = "rfc9990";
      else if (value === DRAFT_NAMESPACE && this.namespaceHint === null) this.namespaceHint = "draft";
    }
  }

  // saxes reports closing tags in the order it opened them, also when it recovers, so the stack's top
  // is the element being closed and the tag name need not be looked at again.
  private onClose(): void {
    const depth = this.stack.length;
    const code = depth > 0 ? this.stack[depth - 1]! : El.other;
    const parent = depth > 1 ? this.stack[depth - 2]! : El.other;
    // Character references can make lone surrogates, which are not text (and not valid JSON).
    const value = this.collecting ? this.text.trim().replace(LONE_SURROGATE, "\uFFFD") : "";
    // While the field is still on the stack, so that a refusal can name it.
    if (this.collecting && this.fieldHasEntity) this.onEntityIn(code, parent, value);
    this.stack.pop();
    this.names.pop();
    this.text = "";
    this.collecting = false;
    this.fieldHasEntity = false;
    switch (parent) {
      case El.feedback:
        if (code === El.version) this.version = value;
        else if (code === El.record) this.closeRecord();
        break;
      case El.reportMetadata:
        if (code === El.orgName) this.orgName = value;
        else if (code === El.email) this.email = value;
        else if (code === El.reportId) this.reportId = value;
        break;
      case El.dateRange:
        if (code === El.begin) this.begin = value;
        else if (code === El.end) this.end = value;
        break;
      case El.policyPublished:
        this.setPolicy(code, value);
        break;
      case El.row:
        if (!this.row) break;
        if (code === El.sourceIp) this.row.sourceIp = value;
        else if (code === El.count) this.row.count = value;
        break;
      case El.policyEvaluated:
        if (!this.row) break;
        if (code === El.disposition) this.row.disposition = value.toLowerCase();
        else if (code === El.dkim) this.row.policyDkim = value.toLowerCase();
        else if (code === El.spf) this.row.policySpf = value.toLowerCase();
        else if (code === El.reason && this.reason) {
          // An empty <reason/> (seen in the wild) says nothing; keep only reasons with content.
          if (this.reason.type !== "" || this.reason.comment !== null) this.row.reasons.push(this.reason);
          this.reason = null;
        }
        break;
      case El.reason:
        if (!this.reason) break;
        if (code === El.type) this.reason.type = value.toLowerCase();
        else if (code === El.comment) this.reason.comment = orNull(value);
        break;
      case El.identifiers:
        if (!this.row) break;
        if (code === El.headerFrom) this.row.headerFrom = value.toLowerCase();
        else if (code === El.envelopeFrom) this.row.envelopeFrom = orNull(value.toLowerCase());
        else if (code === El.envelopeTo) this.row.envelopeTo = orNull(value.toLowerCase());
        break;
      case El.authResults:
        if (!this.row) break;
        if (code === El.dkim && this.dkim) {
          this.row.dkim.push(this.dkim);
          this.dkim = null;
        } else if (code === El.spf && this.spf) {
          this.row.spf.push(this.spf);
          this.spf = null;
        }
        break;
      case El.dkim:
        if (!this.dkim) break;
        if (code === El.domain) this.dkim.domain = value.toLowerCase();
        else if (code === El.selector) this.dkim.selector = orNull(value);
        else if (code === El.result) this.dkim.result = value.toLowerCase();
        else if (code === El.humanResult) this.dkim.humanResult = orNull(value);
        break;
      case El.spf:
        if (!this.spf) break;
        if (code === El.domain) this.spf.domain = value.toLowerCase();
        else if (code === El.scope) this.spf.scope = orNull(value.toLowerCase());
        else if (code === El.result) this.spf.result = value.toLowerCase();
        break;
    }
  }

  private setPolicy(code: number, value: string): void {
    const lower = orNull(value.toLowerCase());
    switch (code) {
      case El.domain:
        this.policy.domain = value.toLowerCase();
        break;
      case El.adkim:
        this.policy.adkim = lower;
        break;
      case El.aspf:
        this.policy.aspf = lower;
        break;
      case El.p:
        this.policy.p = lower;
        break;
      case El.sp:
        this.policy.sp = lower;
        break;
      case El.np:
        this.policy.np = lower;
        break;
      case El.pct:
        this.policy.pct = /^\d+$/.test(value) ? Number(value) : null;
        break;
      case El.fo:
        this.policy.fo = lower;
        break;
      case El.testing:
        this.policy.testing = lower;
        break;
      case El.discoveryMethod:
        this.policy.discoveryMethod = lower;
        break;
    }
  }

  private closeRecord(): void {
    const draft = this.row;
    this.row = null;
    if (!draft) return;
    if (draft.entityIn !== null) {
      this.dropRow("unexpanded_entity", `${draft.entityIn} holds an entity reference that is never expanded`);
      return;
    }
    if (draft.sourceIp === null || draft.sourceIp === "") {
      this.dropRow("missing_source_ip", "missing source_ip");
      return;
    }
    const sourceIp = normaliseIp(draft.sourceIp);
    if (sourceIp === null) {
      this.dropRow("invalid_source_ip", `invalid source_ip "${draft.sourceIp.slice(0, 64)}"`);
      return;
    }
    if (draft.count === null) {
      this.dropRow("missing_count", "missing count");
      return;
    }
    if (!/^\d+$/.test(draft.count)) {
      this.dropRow("invalid_count", `invalid count "${draft.count.slice(0, 32)}"`);
      return;
    }
    const count = Number(draft.count);
    if (count > MAX_REPORT_MESSAGES) {
      throw new ReportParseError(
        "count_out_of_range",
        `row ${this.rowNumber} counts ${draft.count.slice(0, 32)} messages, over the limit of ${MAX_REPORT_MESSAGES}`,
      );
    }
    this.messages += count;
    if (this.messages > MAX_REPORT_MESSAGES) {
      throw new ReportParseError(
        "count_out_of_range",
        `the report counts more than ${MAX_REPORT_MESSAGES} messages (at row ${this.rowNumber})`,
      );
    }
    this.keptRows++;
    this.batch.push({
      sourceIp,
      count,
      disposition: draft.disposition,
      policyDkim: draft.policyDkim,
      policySpf: draft.policySpf,
      reasons: draft.reasons,
      arc: arcOf(draft.reasons),
      headerFrom: draft.headerFrom,
      envelopeFrom: draft.envelopeFrom,
      envelopeTo: draft.envelopeTo,
      dkim: draft.dkim,
      spf: draft.spf,
    });
    if (this.batch.length >= this.limits.rowBatch) this.flushRows();
  }

  private dropRow(reason: DroppedRowReason, why: string): void {
    this.dropped.add(reason, `row ${this.rowNumber}: ${why}`);
    // A report of only bad rows must not grow an unbounded warning list either.
    if (this.dropped.total <= MAX_DROPPED_ROW_WARNINGS)
      this.warnings.push(`dropped row ${this.rowNumber}: ${why}`);
  }

  /**
   * A field held an entity reference the parser left as it was (`&xxe;`): never a value to keep.
   * In a row, the row is dropped; in the report's own fields, the report is refused. The policy
   * domain is left to the host-name check, which no entity passes (invalid_domain).
   */
  private onEntityIn(code: number, parent: number, value: string): void {
    if (this.row) {
      this.row.entityIn ??= this.fieldPath(false);
      return;
    }
    if (parent === El.policyPublished && code === El.domain) return;
    const entity = /&[^\s&;]{1,40};/.exec(value)?.[0];
    throw new ReportParseError(
      "unexpanded_entity",
      `${this.fieldPath()} holds an entity reference${entity ? ` (${entity})` : ""} that is never expanded: DTDs are not read`,
    );
  }

  private flushRows(): void {
    if (this.batch.length === 0) return;
    this.ready.push({ kind: "aggregate-rows", rows: this.batch });
    this.batch = [];
  }

  private emitHeader(): void {
    if (this.header) return;
    if (!/^\d+$/.test(this.begin) || !/^\d+$/.test(this.end)) {
      throw new ReportParseError(
        "incomplete_report",
        `aggregate report without a valid date_range (begin "${this.begin}", end "${this.end}")`,
      );
    }
    const begin = Number(this.begin);
    const end = Number(this.end);
    const range = `date_range from ${this.begin.slice(0, 24)} to ${this.end.slice(0, 24)}`;
    if (begin > MAX_TIMESTAMP || end > MAX_TIMESTAMP) {
      throw new ReportParseError("invalid_date_range", `${range} lies past 9999-12-31T23:59:59Z`);
    }
    if (end < begin) {
      throw new ReportParseError("invalid_date_range", `${range} ends before it begins`);
    }
    if (end - begin > MAX_DATE_RANGE_SECONDS) {
      throw new ReportParseError(
        "invalid_date_range",
        `${range} spans more than ${MAX_DATE_RANGE_SECONDS / 86_400} days`,
      );
    }
    const domain = hostNameOf(this.policy.domain);
    if (domain === null) {
      throw new ReportParseError(
        "invalid_domain",
        this.policy.domain === ""
          ? "policy_published has no domain"
          : `policy_published domain "${this.policy.domain.slice(0, 80)}" is not a host name`,
      );
    }
    this.policy.domain = domain;
    if (this.reportId === "") this.warnings.push("report_metadata has no report_id");
    const organization = organizationOf(this.orgName, this.email);
    if (organization === null) {
      const named =
        this.orgName.trim() !== ""
          ? `org_name "${this.orgName.trim().slice(0, 80)}"`
          : `the domain of email "${this.email.trim().slice(0, 80)}"`;
      throw new ReportParseError("invalid_organization", `${named} is not a name: it has an empty label`);
    }
    const reportId = normaliseReportId(this.reportId);
    this.header = {
      schema: this.schema(),
      orgName: this.orgName,
      organization,
      email: this.email,
      reportId,
      begin,
      end,
      policy: { ...this.policy },
      identity: identityOf(["aggregate", organization, reportId, this.policy.domain, begin, end]),
    };
    this.ready.push({ kind: "aggregate-begin", header: this.header });
  }

  private schema(): AggregateHeader["schema"] {
    if (this.namespaceHint === "rfc9990" || this.version.startsWith("2")) return "rfc9990";
    // RFC 7489 made <version> mandatory; reports without it follow the pre-RFC draft schema.
    if (this.namespaceHint === "draft" || this.version === "") return "draft";
    return "rfc7489";
  }
}
