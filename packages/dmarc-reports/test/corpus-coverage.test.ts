import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parsedmarcCorpus } from "../../../test/support/corpus.js";

// Issue #3: every file of the parsedmarc corpus has a test. This fails when a file is added to
// the corpus (or a test is removed) without a test naming it.
const corpusRoot = parsedmarcCorpus;
const testDir = fileURLToPath(new URL("./", import.meta.url));

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

describe("corpus coverage", () => {
  const testSources = readdirSync(testDir)
    .filter((name) => name.endsWith(".test.ts") && name !== "corpus-coverage.test.ts")
    .map((name) => readFileSync(join(testDir, name), "utf8"))
    .join("\n");
  const reportFiles = walk(corpusRoot)
    .map((path) => relative(corpusRoot, path))
    .filter((path) => path !== "LICENSE");

  it("finds the corpus", () => {
    expect(reportFiles.length).toBeGreaterThanOrEqual(29);
  });

  it.each(reportFiles)("%s is named by a test", (file) => {
    const name = file.split("/").pop()!;
    // Tests name long files by a distinctive prefix (e.g. "addisonfoods.com!example.com!…").
    const prefix = name.length > 24 ? name.slice(0, 24) : name;
    expect(testSources.includes(file) || testSources.includes(name) || testSources.includes(prefix)).toBe(
      true,
    );
  });
});
