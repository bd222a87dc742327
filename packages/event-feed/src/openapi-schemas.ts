import { currentSchemaVersion } from "@dmarc-ledger/events";
import { eventDataSchemas } from "./event-data-schemas.js";
import type { FeedEventType } from "./feed-payloads.js";

type Schema = Record<string, unknown>;

/** Every $ref of the generated schemas, pointed at `prefix` + the definition's name. */
function withRefsUnder(schema: unknown, prefix: string): unknown {
  if (Array.isArray(schema)) return schema.map((item) => withRefsUnder(item, prefix));
  if (schema === null || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) =>
      key === "$ref" && typeof value === "string"
        ? [key, value.replace("#/definitions/", prefix)]
        : [key, withRefsUnder(value, prefix)],
    ),
  );
}

/** The fed event types, each with the schema version its `data` has in the feed. */
export const fedTypes = Object.keys(eventDataSchemas.types) as FeedEventType[];

/**
 * The feed's schemas as OpenAPI components, named `<prefix><name>`: `FeedEvent` (one of the
 * types), `FeedEvent_<type>_v<version>` (the envelope with that type's data) and the data's
 * definitions.
 */
export function feedEventComponents(prefix = "FeedData_"): Record<string, Schema> {
  const refBase = `#/components/schemas/${prefix}`;
  const components: Record<string, Schema> = {};
  for (const [name, definition] of Object.entries(eventDataSchemas.definitions)) {
    components[`${prefix}${name}`] = withRefsUnder(definition, refBase) as Schema;
  }
  const envelopes: string[] = [];
  for (const type of fedTypes) {
    const version = currentSchemaVersion[type];
    const name = `FeedEvent_${type}_v${version}`;
    envelopes.push(name);
    components[name] = {
      type: "object",
      additionalProperties: false,
      required: [
        "specversion",
        "id",
        "source",
        "type",
        "time",
        "subject",
        "datacontenttype",
        "dataversion",
        "cursor",
        "data",
      ],
      properties: {
        specversion: { const: "1.0" },
        id: { type: "string", description: "The event's id: the same in every read and replay." },
        source: { type: "string", format: "uri", description: "This region's API root." },
        type: { const: type },
        time: { type: "string", format: "date-time" },
        subject: { type: "string", description: "The report domain, the domain, or your tenant's id." },
        datacontenttype: { const: "application/json" },
        dataversion: { const: version, description: "The schema version of data." },
        cursor: { type: "string", description: "after= this resumes right behind the event." },
        data: withRefsUnder((eventDataSchemas.types as Record<string, unknown>)[type], refBase),
      },
    };
  }
  components.FeedEvent = { oneOf: envelopes.map((name) => ({ $ref: `#/components/schemas/${name}` })) };
  return components;
}
