import { readFileSync } from "node:fs";
import { z } from "zod";

/** A setting that names a file (a certificate, a key): the path, or undefined when unset or blank. */
export function filePath() {
  return z
    .string()
    .optional()
    .transform((value) => value?.trim() || undefined);
}

/**
 * Reads the file a setting names, at start, so that a wrong path is a configuration error and not
 * a failure at the first connection. A problem is added to `problems` (for ConfigError).
 */
export function readSettingFile(
  variable: string,
  path: string,
  problems: { variable: string; message: string }[],
): Buffer | null {
  try {
    return readFileSync(path);
  } catch (error) {
    problems.push({ variable, message: `cannot read "${path}": ${(error as NodeJS.ErrnoException).code}` });
    return null;
  }
}
