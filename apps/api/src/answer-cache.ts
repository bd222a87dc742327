/**
 * The list endpoints' answers, kept per process and reused while the read models they came from
 * are unchanged (their version: readModelVersion). Many clients ask the same questions (the
 * default period, a dashboard's presets); a by-source page over a year costs the database tens of
 * milliseconds, a kept one nothing. Bounded by bytes, least recently used first out; an answer
 * larger than a sixteenth of the bound is not kept. Requests that miss the same answer together
 * share one computation, so that a new version (or a new second of "now") does not send every
 * client waiting for it to the database at once.
 */
export class AnswerCache {
  private readonly entries = new Map<string, { version: string; body: string; bytes: number }>();
  private readonly computing = new Map<string, Promise<string>>();
  private readonly perVersion = new Map<string, Promise<unknown>>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get enabled(): boolean {
    return this.maxBytes > 0;
  }

  /**
   * The answer for `key` at `version`: the kept one, the one being computed, or `compute`'s
   * (kept). Says which.
   */
  async answer(
    key: string,
    version: string,
    compute: () => Promise<string>,
  ): Promise<{ body: string; outcome: "hit" | "shared" | "miss" }> {
    const kept = this.get(key, version);
    if (kept !== undefined) return { body: kept, outcome: "hit" };
    const flight = `${version}\u0000${key}`;
    const running = this.computing.get(flight);
    if (running) return { body: await running, outcome: "shared" };
    const computed = compute();
    this.computing.set(flight, computed);
    try {
      const body = await computed;
      this.set(key, version, body);
      return { body, outcome: "miss" };
    } finally {
      this.computing.delete(flight);
    }
  }

  /**
   * A value that depends only on the read models' version (the newest fact's time), computed once
   * per version. Only the latest few versions are remembered.
   */
  once<T>(version: string, compute: () => Promise<T>): Promise<T> {
    let value = this.perVersion.get(version) as Promise<T> | undefined;
    if (!value) {
      value = compute();
      // A failure is not remembered.
      value.catch(() => this.perVersion.delete(version));
      this.perVersion.set(version, value);
      for (const [old] of this.perVersion) {
        if (this.perVersion.size <= 4) break;
        this.perVersion.delete(old);
      }
    }
    return value;
  }

  /** The answer kept for `key` if it was made at `version`. */
  get(key: string, version: string): string | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.version !== version) {
      this.remove(key);
      return undefined;
    }
    // Most recently used last.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.body;
  }

  set(key: string, version: string, body: string): void {
    // Strings are UTF-16 in memory: two bytes a character, which also covers the key.
    const bytes = 2 * (body.length + key.length + version.length);
    if (!this.enabled || bytes > this.maxBytes / 16) return;
    this.remove(key);
    this.entries.set(key, { version, body, bytes });
    this.bytes += bytes;
    for (const [oldest] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(oldest);
    }
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  private remove(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }
}
