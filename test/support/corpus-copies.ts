import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { aggregateCorpus } from "./corpus.js";

/**
 * Writes `count` aggregate report files into `dir`: the corpus's plain XML reports that parse (the
 * real ones, under 64 KiB), taken in turn, each copy with its report id made its own, so that
 * every file is a report to store and none a duplicate. For tests that need many inputs (a large
 * import) without inventing their content.
 */
export async function distinctCorpusCopies(dir: string, count: number): Promise<string[]> {
  const names = (await readdir(aggregateCorpus)).filter(
    (name) => name.endsWith(".xml") && !name.startsWith("invalid_"),
  );
  const reports: string[] = [];
  for (const name of names.sort()) {
    const text = await readFile(join(aggregateCorpus, name), "utf8");
    if (text.length < 64 * 1024 && /<report_id>[^<]+<\/report_id>/.test(text)) reports.push(text);
  }
  if (reports.length === 0) throw new Error(`no plain XML aggregate report in ${aggregateCorpus}`);
  await mkdir(dir, { recursive: true });
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const copy = reports[i % reports.length]!.replace(
      /<report_id>([^<]+)<\/report_id>/,
      (_, id: string) => `<report_id>${id}-copy-${i}</report_id>`,
    );
    const path = join(dir, `report-${String(i).padStart(5, "0")}.xml`);
    await writeFile(path, copy);
    paths.push(path);
  }
  return paths;
}
