/**
 * docs/benchmarks.md keeps each benchmark's last figures between two markers:
 *
 *   <!-- figures: test/bench/cli.bench.ts -->
 *   …
 *   <!-- /figures -->
 *
 * `pnpm bench` replaces a block with what the benchmark printed; nothing else in the page changes.
 */
const blockPattern = /<!-- figures: (\S+) -->\n([\s\S]*?)<!-- \/figures -->/g;

/** The entry points that have a figures block, in the page's order. */
export function figureBlocks(doc: string): string[] {
  return [...doc.matchAll(blockPattern)].map((match) => match[1]!);
}

/** The block's text, between its markers. */
export function figuresOf(doc: string, entry: string): string | undefined {
  return [...doc.matchAll(blockPattern)].find((match) => match[1] === entry)?.[2];
}

/** The page with `entry`'s block replaced by `body`; an entry without its block is an error. */
export function replaceFigures(doc: string, entry: string, body: string): string {
  if (!figureBlocks(doc).includes(entry)) {
    throw new Error(`docs/benchmarks.md has no figures block for ${entry}: add its section first`);
  }
  const text = body.endsWith("\n") ? body : `${body}\n`;
  return doc.replace(blockPattern, (whole, name: string) =>
    name === entry ? `<!-- figures: ${entry} -->\n${text}<!-- /figures -->` : whole,
  );
}

const ansi = /\u001b\[[0-9;?]*[A-Za-z]/g;
/** At most this many of a run's last lines are kept: the figures, not the progress before them. */
export const keptLines = 80;

/** The block for one run: what was run, where, and the last lines it printed. */
export function figuresBody(options: {
  entry: string;
  output: string;
  date: Date;
  node: string;
  cores: number;
  /** The machine's one-minute load average when the run ended. */
  load: number;
  settings: Record<string, string>;
}): string {
  const lines = options.output.replace(ansi, "").replace(/\r/g, "").trimEnd().split("\n");
  const kept = lines.slice(-keptLines);
  const settings = Object.entries(options.settings)
    .map(([name, value]) => `${name}=${value}`)
    .join(" ");
  const command = `${settings ? `${settings} ` : ""}pnpm bench ${options.entry}`;
  return [
    `Last run ${options.date.toISOString().slice(0, 10)}, Node ${options.node}, ${options.cores} cores at load ${options.load.toFixed(1)}: \`${command}\`` +
      (kept.length < lines.length ? ` (its last ${keptLines} lines)` : ""),
    "",
    "```text",
    ...kept.map((line) => line.replaceAll("```", "'''")),
    "```",
  ].join("\n");
}
