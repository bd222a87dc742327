import type { ImportedInput, StoredFilesReport } from "./import-files.js";

interface FileSoFar {
  /** Received, not shown yet (in order: one thread receives all of a file's inputs, in order). */
  waiting: ImportedInput[];
  shown: number;
  /** How many inputs the file had, once it has been read to its end. */
  expected: number | null;
}

/**
 * Shows the received inputs in the import's file order, whichever import thread received them:
 * the inputs of the file being shown at once (a large mbox file shows its messages as they are
 * stored), those of later files once every earlier file has been shown. With one thread they
 * arrive in that order, and nothing waits.
 */
export class InFileOrder implements StoredFilesReport {
  private next = 0;
  private readonly files = new Map<number, FileSoFar>();
  /** Bytes of the files shown to their end. */
  private bytesDone = 0;

  constructor(
    private readonly sizes: readonly number[],
    /** `progress`: bytes of the import's files shown so far, this input's part of its file included. */
    private readonly show: (input: ImportedInput, progress: number) => void,
  ) {}

  input(input: ImportedInput): void {
    this.file(input.file).waiting.push(input);
    this.showReady();
  }

  fileRead(file: number, inputs: number): void {
    this.file(file).expected = inputs;
    this.showReady();
  }

  /** Whether every file has been shown to its end. */
  get complete(): boolean {
    return this.next >= this.sizes.length;
  }

  private file(index: number): FileSoFar {
    let file = this.files.get(index);
    if (!file) {
      file = { waiting: [], shown: 0, expected: null };
      this.files.set(index, file);
    }
    return file;
  }

  private showReady(): void {
    for (;;) {
      const file = this.files.get(this.next);
      if (!file) return;
      for (const input of file.waiting) {
        file.shown++;
        this.show(input, this.bytesDone + input.fileBytes);
      }
      file.waiting = [];
      if (file.expected === null || file.shown < file.expected) return;
      this.files.delete(this.next);
      this.bytesDone += this.sizes[this.next]!;
      this.next++;
    }
  }
}
