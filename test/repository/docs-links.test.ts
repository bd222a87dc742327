/**
 * The docs a user reads hold together: every package and app has its README (what it does, what
 * it owns, what it must not do; one screen), and every relative link in the README, docs/ and
 * those READMEs leads to a file of the repository, and to a heading of it when it names one.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const parts = ["packages", "apps"].flatMap((group) =>
  readdirSync(join(root, group), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${group}/${entry.name}`),
);
const pages = [
  "README.md",
  ...readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
  ...parts.map((part) => `${part}/README.md`).filter((path) => existsSync(join(root, path))),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchors(path: string): Set<string> {
  const text = readFileSync(path, "utf8").replace(/```[\s\S]*?```/g, "");
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!)));
}

describe("package and app READMEs", () => {
  it.each(parts)("%s has a README of one screen: what it does, owns, must not do", (part) => {
    const path = join(root, part, "README.md");
    expect(existsSync(path), `${part}/README.md`).toBe(true);
    const text = readFileSync(path, "utf8");
    expect(text.split("\n").length).toBeLessThanOrEqual(100);
    expect(text).toMatch(/\bOwns\b/);
    expect(text).toMatch(/\bMust not\b/);
  });
});

describe("links in the docs", () => {
  it("lead to files of the repository and to their headings", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      const text = readFileSync(join(root, page), "utf8").replace(/```[\s\S]*?```/g, "");
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!;
        if (/^[a-z]+:/.test(target)) continue;
        checked++;
        const [file, anchor] = target.split("#") as [string, string | undefined];
        const path = file ? join(root, dirname(page), file) : join(root, page);
        if (!existsSync(path)) {
          broken.push(`${page}: ${target} (no ${relative(root, path)})`);
        } else if (anchor && path.endsWith(".md") && !anchors(path).has(anchor)) {
          broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });
});
