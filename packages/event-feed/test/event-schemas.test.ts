/**
 * The JSON Schemas of the feed's events are generated from the TypeScript types: the checked-in
 * file must be what the generator gives now (run `pnpm --filter @dmarc-ledger/event-feed
 * generate-schemas` after a catalogue change), and every catalogue type has one unless the feed
 * never carries it.
 */
import { eventTypes } from "@dmarc-ledger/events";
import { describe, expect, it } from "vitest";
import { generateEventSchemas } from "../scripts/event-schemas.js";
import { eventDataSchemas, feedEventComponents, unfedTypes } from "../src/index.js";

describe("the feed's event schemas", () => {
  it("are in step with the catalogue's types", () => {
    expect(eventDataSchemas).toEqual(generateEventSchemas());
  });

  it("cover every catalogue type the feed carries, and none it never carries", () => {
    const covered = Object.keys(eventDataSchemas.types).sort();
    expect(covered).toEqual(eventTypes.filter((type) => !unfedTypes.has(type)).sort());
    const components = feedEventComponents();
    for (const type of covered)
      expect(Object.keys(components).some((name) => name.startsWith(`FeedEvent_${type}_v`))).toBe(true);
  });

  it("leave out the key's hash and sealed personal data", () => {
    const text = JSON.stringify(eventDataSchemas);
    expect(text).not.toContain("keyHash");
    expect(text).not.toContain("sealed");
  });
});
