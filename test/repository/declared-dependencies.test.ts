/**
 * Every library a workspace package declares is one it imports: a dependency nothing imports
 * (mailparser was one, for months) is installed into every image and audited for nothing.
 * Workspace packages (@dmarc-ledger/*) are left to the type check, development tools (a dev
 * dependency with a command) are run rather than imported, and the CLI is left out: it declares
 * the libraries its bundle loads from node_modules (scripts/bundle-cli.mjs), which its own sources
 * never name.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const declaringForTheBundle = new Set(["apps/cli"]);

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    if (name === "node_modules" || name === "dist" || name === "bundle") return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(name) ? [path] : [];
  });
}

/** The package names a file imports, requires or resolves, without subpaths. */
function importedPackages(text: string): Set<string> {
  const names = new Set<string>();
  const specifier =
    /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\brequire\s*\(\s*|\bresolve\s*\(\s*)["']([^"'./][^"']*)["']/g;
  for (const match of text.matchAll(specifier)) {
    const parts = match[1]!.split("/");
    names.add(parts[0]!.startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]!);
  }
  return names;
}

/** @types/foo types foo, @types/scope__name types @scope/name. */
const typedPackage = (name: string) =>
  name.startsWith("@types/") ? name.slice("@types/".length).replace(/^(.+)__(.+)$/, "@$1/$2") : name;

/** Whether the package `name`, as installed for the workspace package in `dir`, has a command. */
function providesCommand(dir: string, name: string): boolean {
  const manifest = join(root, dir, "node_modules", name, "package.json");
  return existsSync(manifest) && Boolean(JSON.parse(readFileSync(manifest, "utf8")).bin);
}

function workspacePackages(): string[] {
  const dirs = ["test"];
  for (const group of ["packages", "apps"]) {
    for (const name of readdirSync(join(root, group))) dirs.push(`${group}/${name}`);
  }
  return dirs.filter((dir) => existsSync(join(root, dir, "package.json")));
}

describe("declared dependencies", () => {
  it("are imported by the package that declares them", () => {
    const unused: string[] = [];
    for (const dir of workspacePackages()) {
      if (declaringForTheBundle.has(dir)) continue;
      const manifest = JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
      const imported = new Set<string>();
      for (const file of sourceFiles(join(root, dir))) {
        for (const name of importedPackages(readFileSync(file, "utf8"))) imported.add(name);
      }
      const declared = [
        ...Object.keys(manifest.dependencies ?? {}),
        // A development tool (a dev dependency with a command: typescript's tsc) is run, not imported.
        ...Object.keys(manifest.devDependencies ?? {}).filter((name) => !providesCommand(dir, name)),
      ];
      for (const name of declared) {
        if (name.startsWith("@dmarc-ledger/") || name === "@types/node") continue;
        if (!imported.has(typedPackage(name))) unused.push(`${dir}: ${name}`);
      }
    }
    expect(unused).toEqual([]);
  });

  it("finds what a file imports, in each form", () => {
    const found = importedPackages(
      [
        'import { a } from "alpha";',
        'import type { B } from "@scope/beta/sub";',
        'const c = await import("gamma");',
        'import "delta/register";',
        'const e = require("epsilon");',
        'import.meta.resolve("zeta");',
        'import { local } from "./local.js";',
      ].join("\n"),
    );
    expect([...found].sort()).toEqual(["@scope/beta", "alpha", "delta", "epsilon", "gamma", "zeta"]);
  });
});
