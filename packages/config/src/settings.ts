import { z } from "zod";

/** One environment variable that is wrong, with what is allowed. */
export interface SettingProblem {
  variable: string;
  message: string;
}

/** Thrown before a process writes or listens anything: every wrong variable, named. */
export class ConfigError extends Error {
  constructor(readonly problems: SettingProblem[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p.variable}: ${p.message}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/**
 * Parses the variables a process reads with a zod object schema whose keys are the variable
 * names. An empty string counts as unset, as shells and compose files produce it for "nothing".
 */
export function parseSettings<Shape extends z.ZodRawShape>(
  shape: Shape,
  env: NodeJS.ProcessEnv,
): z.infer<z.ZodObject<Shape>> {
  const input: Record<string, string | undefined> = {};
  for (const name of Object.keys(shape)) {
    const value = env[name];
    input[name] = value === "" ? undefined : value;
  }
  const result = z.object(shape).safeParse(input);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => ({
      variable: String(issue.path[0] ?? "(environment)"),
      message: issue.message,
    })),
  );
}

/**
 * Runs every reader of a process's settings (each may throw a ConfigError) and throws one
 * ConfigError naming the wrong variables of all of them, so that a person fixes them in one go.
 */
export function readAllSettings<Readers extends Record<string, () => unknown>>(
  readers: Readers,
): { [K in keyof Readers]: ReturnType<Readers[K]> } {
  const problems: SettingProblem[] = [];
  const read: Record<string, unknown> = {};
  for (const [name, reader] of Object.entries(readers)) {
    try {
      read[name] = reader();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return read as { [K in keyof Readers]: ReturnType<Readers[K]> };
}
