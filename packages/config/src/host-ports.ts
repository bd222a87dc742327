import { z } from "zod";

/**
 * A list of servers, `host:port,…` (a bare host means `defaultPort`; IPv6 as `[::1]:53`); null
 * when unset.
 */
export function hostPorts(defaultPort: number) {
  return z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return null;
      const servers = value
        .split(",")
        .map((server) => server.trim())
        .filter(Boolean);
      const shape = /^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+)(?::(\d{1,5}))?$/;
      const wrong = servers.find((server) => {
        const match = shape.exec(server);
        return !match || Number(match[2] ?? defaultPort) > 65535;
      });
      if (servers.length === 0 || wrong !== undefined) {
        ctx.addIssue({ code: "custom", message: `"${wrong ?? value}" is not host:port[,host:port…]` });
        return z.NEVER;
      }
      return servers;
    });
}
