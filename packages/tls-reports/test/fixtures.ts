import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The report files written for the tests from RFC 8460's text and the variations real reporters send. */
export const fixturesDir = fileURLToPath(new URL("./fixtures/", import.meta.url));

export const fixtureNames = readdirSync(fixturesDir)
  .filter((name) => name.endsWith(".json"))
  .sort();

export function fixture(name: string): Buffer {
  return readFileSync(fixturesDir + name);
}
