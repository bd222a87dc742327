/**
 * The by-source endpoints answer from calendar rankings when one is close to the period: held to
 * the plain grouping of the facts on PGlite (the cases are in cases.ts). Every whole list, and a
 * page from each walk: a request costs PGlite about 26 ms of CPU, and the pages in between are
 * the same statements with other numbers, which postgres.test.ts compares on PostgreSQL.
 */
import { pgliteBackend } from "../../support/service-harness.js";
import { pagesOnEachWalk, rankingCases } from "./cases.js";

rankingCases(pgliteBackend, pagesOnEachWalk);
