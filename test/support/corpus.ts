import { fileURLToPath } from "node:url";

/**
 * The third-party corpora the tests read, kept in the repository under test/fixtures/corpus/
 * (origins and licences: NOTICE). Every test and bench finds them through this module, so that
 * a move changes one line.
 */
export const corpusDir = fileURLToPath(new URL("../fixtures/corpus/", import.meta.url));
export const parsedmarcCorpus = `${corpusDir}dmarc/parsedmarc/`;
export const aggregateCorpus = `${parsedmarcCorpus}aggregate/`;
export const failureCorpus = `${parsedmarcCorpus}failure/`;
/** The RFC 7208 SPF test suite (pyspf's rfc7208-tests.yml). */
export const rfc7208Suite = `${corpusDir}spf/rfc7208-tests.yml`;
