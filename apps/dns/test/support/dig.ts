import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface DigAnswer {
  status: string;
  flags: string[];
  answers: { name: string; ttl: number; type: string; data: string }[];
  authority: { name: string; ttl: number; type: string; data: string }[];
  /** The OPT pseudo-section line, when the answer carried EDNS(0). */
  edns: string | null;
  text: string;
}

function records(section: string | undefined) {
  return (section ?? "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith(";"))
    .map((line) => {
      const [name, ttl, , type, ...rest] = line.split(/\s+/);
      return { name: name!, ttl: Number(ttl), type: type!, data: rest.join(" ") };
    });
}

/** Debian's dig against our server; `options` are dig's own (+tcp, +bufsize=N, +noedns…). */
export async function dig(
  port: number,
  name: string,
  type: string,
  options: string[] = [],
): Promise<DigAnswer> {
  const { stdout } = await run(
    "dig",
    ["@127.0.0.1", "-p", String(port), name, type, "+norecurse", "+time=2", "+tries=1", ...options],
    { timeout: 10_000 },
  );
  const status = /status: (\w+)/.exec(stdout)?.[1] ?? "";
  const flags = (/;; flags: ([^;]*);/.exec(stdout)?.[1] ?? "").trim().split(/\s+/);
  const section = (title: string) =>
    new RegExp(`;; ${title} SECTION:\\n([\\s\\S]*?)(?:\\n\\n|$)`).exec(stdout)?.[1];
  return {
    status,
    flags,
    answers: records(section("ANSWER")),
    authority: records(section("AUTHORITY")),
    edns: /; EDNS: (.*)/.exec(stdout)?.[1] ?? null,
    text: stdout,
  };
}

/** The TXT data as one string, dig's quoted character-strings joined. */
export function txtValue(data: string): string {
  return [...data.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((match) => match[1]).join("");
}
