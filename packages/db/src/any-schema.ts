/**
 * The schema of the handle a process or a test holds and passes to every package. Each package
 * types its own functions with its own tables (`Kysely<TenancySchema>`), and Kysely's handles are
 * invariant in their schema: a handle typed with every table would not pass for one package's,
 * while one of this schema passes for all. Code that hands the handle on to another package (the
 * projection engine, which gives it to projections of any schema) takes it as this too.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type AnySchema = any;
