/**
 * The by-source endpoints answer from calendar rankings when one is close to the period: held to
 * the plain grouping of the facts on PostgreSQL (the cases are in cases.ts), every whole list and
 * the pages at every position, and a projection batch that commits after a build, which needs a
 * second connection.
 */
import { postgresBackend } from "../../support/service-harness.js";
import { batchAfterBuildCase, pagesAtEveryPosition, rankingCases } from "./cases.js";

rankingCases(postgresBackend, pagesAtEveryPosition);
batchAfterBuildCase();
