/**
 * docs/benchmarks.md is in step with the benchmarks: every entry point `pnpm bench` runs has its
 * section and figures block, and no block names a benchmark that is gone; and `pnpm bench`'s
 * runner writes a run's output into that benchmark's block, and only there, run on a scratch
 * repository of two tiny benchmarks (one that fails, whose block stays as it was).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { benchEntryPoints } from "../bench/entry-points.js";
import { figureBlocks, figuresOf, replaceFigures } from "../bench/figures-block.js";
import { runBenches } from "../bench/runner.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const doc = readFileSync(join(root, "docs/benchmarks.md"), "utf8");

describe("docs/benchmarks.md", () => {
  const entries = benchEntryPoints(root);

  it("has a section and a figures block for every benchmark, and none for another", () => {
    expect(entries.length).toBeGreaterThanOrEqual(20);
    expect([...figureBlocks(doc)].sort()).toEqual([...entries].sort());
    for (const entry of entries) {
      // The section names its entry point on its own line, under a heading.
      expect(doc, entry).toMatch(new RegExp(`\\n## [^\\n]+\\n\\n\`${entry.replaceAll(".", "\\.")}\`\\n`));
      expect(figuresOf(doc, entry)?.trim(), entry).not.toBe("");
    }
  });

  it("refuses figures for a benchmark without a block", () => {
    expect(() => replaceFigures(doc, "test/bench/none.bench.ts", "x")).toThrow(/no figures block/);
  });
});

describe("pnpm bench's runner", () => {
  const scratch = mkdtempSync(join(tmpdir(), "dl-bench-doc-"));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("writes a run's figures into its block and leaves the others as they were", async () => {
    for (const dir of ["packages", "apps", "test/bench", "docs"])
      mkdirSync(join(scratch, dir), { recursive: true });
    writeFileSync(
      join(scratch, "test/bench/tiny.bench.ts"),
      [
        "const rows: number = Number(process.env.BENCH_ROWS);",
        'console.log("loading…");',
        'console.log("\\u001b[1mrate\\u001b[22m: " + rows * 2 + " rows/s, ratio 0.5");',
      ].join("\n"),
    );
    writeFileSync(join(scratch, "test/bench/broken.bench.ts"), 'console.log("partial"); process.exit(3);\n');
    const page = [
      "# Benchmarks",
      "",
      "## Tiny",
      "",
      "`test/bench/tiny.bench.ts`",
      "",
      "<!-- figures: test/bench/tiny.bench.ts -->",
      "old tiny figures",
      "<!-- /figures -->",
      "",
      "## Broken",
      "",
      "`test/bench/broken.bench.ts`",
      "",
      "<!-- figures: test/bench/broken.bench.ts -->",
      "old broken figures",
      "<!-- /figures -->",
      "",
    ].join("\n");
    writeFileSync(join(scratch, "docs/benchmarks.md"), page);

    const printed: Buffer[] = [];
    const failed = await runBenches({
      root: scratch,
      env: { ...process.env, BENCH_ROWS: "21" },
      write: (chunk) => printed.push(chunk),
    });

    expect(failed).toEqual(["test/bench/broken.bench.ts"]);
    const after = readFileSync(join(scratch, "docs/benchmarks.md"), "utf8");
    const tiny = figuresOf(after, "test/bench/tiny.bench.ts")!;
    expect(tiny).toContain("rate: 42 rows/s, ratio 0.5");
    expect(tiny).toContain("BENCH_ROWS=21 pnpm bench test/bench/tiny.bench.ts");
    expect(tiny).toContain(`Node ${process.version}`);
    expect(tiny).not.toContain("\u001b");
    expect(tiny).not.toContain("old tiny figures");
    expect(figuresOf(after, "test/bench/broken.bench.ts")).toBe("old broken figures\n");
    expect(after.split("<!-- figures:")[0]).toBe(page.split("<!-- figures:")[0]);
    // The output still streams to the terminal as it comes.
    expect(Buffer.concat(printed).toString()).toContain("partial");

    // A filter runs only the entries whose path contains it.
    const filtered = await runBenches({ root: scratch, filter: "broken", write: () => {} });
    expect(filtered).toEqual(["test/bench/broken.bench.ts"]);
    expect(
      figuresOf(readFileSync(join(scratch, "docs/benchmarks.md"), "utf8"), "test/bench/tiny.bench.ts"),
    ).toBe(tiny);
  });
});
