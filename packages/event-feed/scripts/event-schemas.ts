import { fileURLToPath } from "node:url";
import { createGenerator } from "ts-json-schema-generator";

export const schemasFile = fileURLToPath(new URL("../src/event-data-schemas.ts", import.meta.url));

/**
 * The JSON Schema of every fed event type's `data`, from the TypeScript types (FeedPayloads in
 * src/feed-payloads.ts, which follows the catalogue): `{ definitions, types }`, where
 * `types[type]` is the schema of that type's data and every $ref points into `definitions`.
 * Run `pnpm --filter @dmarc-ledger/event-feed generate-schemas` after the catalogue changes; a
 * test fails while the checked-in file is behind.
 */
export function generateEventSchemas(): {
  definitions: Record<string, unknown>;
  types: Record<string, unknown>;
} {
  const generated = createGenerator({
    path: fileURLToPath(new URL("../src/feed-payloads.ts", import.meta.url)),
    tsconfig: fileURLToPath(new URL("../../../tsconfig.json", import.meta.url)),
    type: "FeedPayloads",
    skipTypeCheck: true,
    additionalProperties: false,
    sortProps: true,
    jsDoc: "basic",
  }).createSchema("FeedPayloads");
  const definitions = { ...(generated.definitions ?? {}) } as Record<string, Record<string, unknown>>;
  const root = definitions.FeedPayloads as { properties: Record<string, unknown> };
  delete definitions.FeedPayloads;
  return {
    definitions: Object.fromEntries(Object.entries(definitions).sort(([a], [b]) => a.localeCompare(b))),
    types: root.properties,
  };
}
