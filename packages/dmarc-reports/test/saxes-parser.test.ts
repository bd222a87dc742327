/**
 * The reader's saxes parser must keep fast properties (saxes-parser.ts): every handler slot is
 * made while it is constructed, so that `on()` replaces a value and never adds a property. A
 * saxes release that renamed its handler fields would add them again, and the parse of a small
 * report would take about three times as long; this says so first.
 */
import { describe, expect, it } from "vitest";
import { SlottedSaxesParser } from "../src/aggregate/saxes-parser.js";

const events = [
  "xmldecl",
  "text",
  "processinginstruction",
  "doctype",
  "comment",
  "opentagstart",
  "attribute",
  "opentag",
  "closetag",
  "cdata",
  "error",
  "end",
  "ready",
] as const;

describe("SlottedSaxesParser", () => {
  it("has a slot for every event's handler: on() adds no property to the parser", () => {
    const parser = new SlottedSaxesParser({ position: false });
    const before = Object.keys(parser);
    for (const event of events) parser.on(event, () => {});
    expect(Object.keys(parser)).toEqual(before);
  });

  it("still hands every event to its handler", () => {
    const parser = new SlottedSaxesParser({ position: false });
    const seen: string[] = [];
    parser.on("opentag", (tag) => seen.push(`<${tag.name}>`));
    parser.on("text", (text) => seen.push(text));
    parser.on("cdata", (text) => seen.push(`cdata:${text}`));
    parser.on("comment", (text) => seen.push(`comment:${text}`));
    parser.on("closetag", (tag) => seen.push(`</${tag.name}>`));
    parser.write("<a>x<!--c--><![CDATA[y]]></a>").close();
    expect(seen).toEqual(["<a>", "x", "comment:c", "cdata:y", "</a>"]);
  });
});
