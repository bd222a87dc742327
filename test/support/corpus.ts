import { fileURLToPath } from "node:url";

/** The shared corpus, read in place beside the project root (never copied into it). */
export const corpusDir = fileURLToPath(new URL("../../../shared/corpus/", import.meta.url));
export const aggregateCorpus = `${corpusDir}dmarc/parsedmarc/aggregate/`;
export const failureCorpus = `${corpusDir}dmarc/parsedmarc/failure/`;
