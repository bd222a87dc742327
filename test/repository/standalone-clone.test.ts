/**
 * The repository stands on its own: a clone of HEAD, alone in a fresh directory, holds all the
 * suite and the docs need. Checked on the clone (what was committed, not this working tree):
 * - no tracked file names the sibling folder `shared` the project once read its corpus from, and
 *   no relative path written in a source file
 *   (`new URL("…", import.meta.url)`, `join(here, "…")`, an import) leads out of the clone;
 * - the corpus helper (test/support/corpus.ts, which every other corpus path is built from)
 *   resolves inside the clone, to the reports and the RFC 7208 suite, byte for byte as committed;
 * - each third-party item has its licence beside it and a line in NOTICE.
 * The whole suite is not run here (12 minutes): `.ci/run` runs it on CI's own clean clone.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
/** Spelled in parts, so that this file does not name it either. */
const sibling = ["..", "shared"].join("/");
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }).trim();

let parent: string;
let clone: string;
let tracked: string[];

beforeAll(() => {
  parent = mkdtempSync(join(tmpdir(), "dl-clone-"));
  clone = join(parent, "dmarc-ledger");
  const head = git(root, "rev-parse", "HEAD");
  git(parent, "clone", "--quiet", "--no-checkout", root, clone);
  git(clone, "-c", "advice.detachedHead=false", "checkout", "--quiet", head);
  tracked = git(clone, "ls-files", "-z").split("\0").filter(Boolean);
});

afterAll(() => {
  if (parent) rmSync(parent, { recursive: true, force: true });
});

/** The paths a source file writes relative to itself, with the file they are resolved against. */
function relativePaths(file: string, text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /new URL\(\s*["'`](\.\.?\/[^"'`$]*)["'`]\s*,\s*import\.meta\.url/g,
    /join\(\s*(?:here|__dirname|import\.meta\.dirname)\s*,\s*["'`](\.\.?\/[^"'`$]*)["'`]/g,
    /(?:from|import\()\s*["'](\.\.?\/[^"']*)["']/g,
  ];
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) found.push(resolve(dirname(file), match[1]!));
  }
  return found;
}

describe("a clone of HEAD with nothing beside it", () => {
  it("is alone in its directory", () => {
    expect(readdirSync(parent)).toEqual(["dmarc-ledger"]);
    expect(existsSync(join(clone, "..", "shared"))).toBe(false);
    expect(tracked.length).toBeGreaterThan(500);
  });

  it("has no tracked file that names the sibling folder", () => {
    const naming = tracked.filter((path) => readFileSync(join(clone, path)).includes(sibling));
    expect(naming).toEqual([]);
  });

  it("has no source file whose relative paths lead out of the clone", () => {
    const sources = tracked.filter((path) => /\.(?:ts|tsx|mts|mjs|js|cjs)$/.test(path));
    expect(sources.length).toBeGreaterThan(300);
    const outside: string[] = [];
    let checked = 0;
    for (const path of sources) {
      const file = join(clone, path);
      for (const target of relativePaths(file, readFileSync(file, "utf8"))) {
        checked++;
        if (target !== clone && !target.startsWith(clone + sep)) {
          outside.push(`${path} -> ${relative(clone, target)}`);
        }
      }
    }
    expect(outside).toEqual([]);
    // The patterns do find paths: the corpus helper's own, the bench mains' imports of it.
    expect(checked).toBeGreaterThan(1000);
  });

  it("resolves the corpus helper's paths inside the clone, to the committed fixtures", async () => {
    const corpus = (await import(pathToFileURL(join(clone, "test/support/corpus.ts")).href)) as Record<
      string,
      string
    >;
    const paths = ["corpusDir", "parsedmarcCorpus", "aggregateCorpus", "failureCorpus", "rfc7208Suite"];
    for (const name of paths) {
      expect(corpus[name], name).toBeTypeOf("string");
      expect(corpus[name]!.startsWith(clone + sep), `${name}: ${corpus[name]}`).toBe(true);
      expect(existsSync(corpus[name]!), name).toBe(true);
    }
    expect(readdirSync(corpus.aggregateCorpus!).length).toBeGreaterThanOrEqual(19);
    expect(readdirSync(corpus.failureCorpus!).length).toBeGreaterThanOrEqual(5);
    expect(readFileSync(corpus.rfc7208Suite!, "utf8")).toMatch(/RFC 7208/);
    // The fixtures come out of git byte for byte (.gitattributes): a CRLF mail keeps its CRLFs,
    // the invalid UTF-8 report its bytes, the same as the working tree's.
    for (const fixture of [
      "dmarc/parsedmarc/failure/dmarc_ruf_report_linkedin.crlf.eml",
      "dmarc/parsedmarc/aggregate/invalid_utf_8.xml",
      "dmarc/parsedmarc/aggregate/fastmail.com!example.com!1516060800!1516147199!102675056.xml.gz",
    ]) {
      const cloned = readFileSync(join(corpus.corpusDir!, fixture));
      expect(cloned.equals(readFileSync(join(root, "test/fixtures/corpus", fixture))), fixture).toBe(true);
    }
    expect(
      readFileSync(join(corpus.failureCorpus!, "dmarc_ruf_report_linkedin.crlf.eml")).includes("\r\n"),
    ).toBe(true);
  });

  it("carries each third-party item with its licence and a NOTICE line", () => {
    const notice = readFileSync(join(clone, "NOTICE"), "utf8");
    for (const [item, licence] of [
      ["test/fixtures/corpus/dmarc/parsedmarc/", "test/fixtures/corpus/dmarc/parsedmarc/LICENSE"],
      ["test/fixtures/corpus/spf/rfc7208-tests.yml", "test/fixtures/corpus/spf/rfc7208-tests.LICENSE"],
      [
        "packages/source-names/known-senders/base_reverse_dns_map.csv",
        "packages/source-names/known-senders/LICENSE",
      ],
    ] as const) {
      expect(notice.replace(/\s+/g, " "), item).toContain(item);
      expect(statSync(join(clone, licence)).size, licence).toBeGreaterThan(1000);
    }
  });
});
