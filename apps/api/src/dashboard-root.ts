import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The dashboard's built files (apps/web/dist, beside this app: from src/ and dist/ alike), or
 * null when it has not been built.
 */
export function builtDashboard(): string | null {
  const root = fileURLToPath(new URL("../../web/dist/", import.meta.url));
  return existsSync(join(root, "index.html")) ? root : null;
}
