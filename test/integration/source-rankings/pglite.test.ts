/**
 * The by-source endpoints answer from calendar rankings when one is close to the period: held to
 * the plain grouping of the facts on PGlite (the cases are in cases.ts).
 */
import { pgliteBackend } from "../../support/service-harness.js";
import { rankingCases } from "./cases.js";

rankingCases(pgliteBackend);
