import type { Runtime } from "@dmarc-ledger/runtime";
import { type Command, Option } from "commander";
import { CliError, type CliIO } from "../io.js";
import { catchUpTenantTables, resolveTenant } from "../tenant-ref.js";
import { withRuntime } from "../with-runtime.js";

const cli = { causedBy: "process:cli" };

/** Loaded when a command runs, so that `--help` stays light. */
const alerts = () => import("@dmarc-ledger/alerts");

/** The alerts' read models as of every event stored (the projector may not run: embedded, stopped). */
async function catchUpAlerts(runtime: Runtime): Promise<void> {
  await catchUpTenantTables(runtime);
  const [{ catchUp }, { alertProjections }] = await Promise.all([
    import("@dmarc-ledger/projection-engine"),
    import("@dmarc-ledger/alerts/projections"),
  ]);
  await catchUp({ store: runtime.store, db: runtime.db, projections: alertProjections as never });
}

/** The alert commands' errors as the CLI says them. */
async function answering<T>(work: () => Promise<T>): Promise<T> {
  const { InvalidEndpointError, InvalidRuleError, UnknownEndpointError } = await alerts();
  try {
    return await work();
  } catch (error) {
    if (
      error instanceof InvalidEndpointError ||
      error instanceof InvalidRuleError ||
      error instanceof UnknownEndpointError
    ) {
      throw new CliError(error.message);
    }
    throw error;
  }
}

/** What an endpoint may be, from the settings (as the API reads them). */
async function endpointPolicy(
  env: NodeJS.ProcessEnv,
): Promise<{ allowPrivate: boolean; maxEndpoints: number; maxUrlLength: number }> {
  const [{ parseSettings }, { alertsSettings }] = await Promise.all([
    import("@dmarc-ledger/config"),
    import("@dmarc-ledger/alerts/settings"),
  ]);
  const { WEBHOOK_ALLOW_PRIVATE_ADDRESSES, WEBHOOK_MAX_ENDPOINTS, WEBHOOK_MAX_URL_LENGTH } = alertsSettings;
  const settings = parseSettings(
    { WEBHOOK_ALLOW_PRIVATE_ADDRESSES, WEBHOOK_MAX_ENDPOINTS, WEBHOOK_MAX_URL_LENGTH },
    env,
  );
  return {
    allowPrivate: settings.WEBHOOK_ALLOW_PRIVATE_ADDRESSES === "yes",
    maxEndpoints: settings.WEBHOOK_MAX_ENDPOINTS,
    maxUrlLength: settings.WEBHOOK_MAX_URL_LENGTH,
  };
}

/** "name=value" pairs of a rule's numbers. */
/** An endpoint's state in words: paused by the service (and why), disabled, or enabled. */
function endpointState(endpoint: {
  enabled: boolean;
  disabled_reason: string | null;
  paused_reason: string | null;
}): string {
  if (!endpoint.enabled) return `disabled (${endpoint.disabled_reason ?? "by the tenant"})`;
  return endpoint.paused_reason === null ? "enabled" : `paused (${endpoint.paused_reason})`;
}

function parseParams(pairs: readonly string[]): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const pair of pairs) {
    const match = /^([a-z_]+)=(.+)$/.exec(pair);
    if (!match) throw new CliError(`--param takes name=number, not "${pair}"`);
    params[match[1]!] = Number(match[2]);
  }
  return params;
}

export function registerAlertCommands(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  const alert = program
    .command("alert")
    .description("alert rules and the alerts they raised (docs/alerts.md)");

  alert
    .command("rules")
    .description("list a tenant's alert rules: on or off, and their parameters")
    .argument("<tenant>", "the tenant's id or name")
    .option("--json", "print one JSON object per line")
    .action(async (reference: string, options: { json?: boolean }) => {
      const { tenantRules } = await alerts();
      const rules = await withRuntime(env, async (runtime) => {
        await catchUpAlerts(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        return tenantRules(runtime.db as never, tenantId);
      });
      for (const rule of rules) {
        const params = Object.entries(rule.params)
          .map(([name, value]) => `${name}=${value}`)
          .join(" ");
        io.out(
          options.json ? JSON.stringify(rule) : `${rule.rule}  ${rule.enabled ? "on" : "off"}  ${params}`,
        );
      }
    });

  alert
    .command("set")
    .description("turn a rule on or off and set its parameters (those not given take their default)")
    .argument("<tenant>", "the tenant's id or name")
    .argument("<rule>", "the rule: `dmarc-ledger alert rules TENANT` lists them")
    .addOption(new Option("--state <state>", "on or off").choices(["on", "off"]).makeOptionMandatory())
    .option("--param <name=value...>", "a parameter of the rule, e.g. threshold_percent=5", [])
    .action(async (reference: string, rule: string, options: { state: "on" | "off"; param: string[] }) => {
      const { setAlertRule } = await alerts();
      await withRuntime(env, async (runtime) => {
        await catchUpTenantTables(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        await answering(() =>
          setAlertRule(
            runtime.store,
            { tenantId, rule, enabled: options.state === "on", params: parseParams(options.param) },
            cli,
          ),
        );
      });
      io.out(`${rule} is ${options.state}.`);
    });

  alert
    .command("list")
    .description("list the alerts raised for a tenant, newest first")
    .argument("<tenant>", "the tenant's id or name")
    .option("--rule <rule>", "only this rule's")
    .option("--limit <n>", "at most this many", "50")
    .option("--json", "print one JSON object per line")
    .action(async (reference: string, options: { rule?: string; limit: string; json?: boolean }) => {
      const { listAlerts } = await alerts();
      const listed = await withRuntime(env, async (runtime) => {
        await catchUpAlerts(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        return listAlerts(runtime.db as never, tenantId, {
          ...(options.rule ? { rule: options.rule } : {}),
          limit: Math.max(1, Number(options.limit) || 50),
          offset: 0,
        });
      });
      for (const record of listed.records) {
        io.out(
          options.json ? JSON.stringify(record) : `${record.raised_at}  ${record.rule}  ${record.summary}`,
        );
      }
      if (listed.total === 0 && !options.json) io.out("No alerts.");
    });

  const webhook = program.command("webhook").description("webhook endpoints that receive a tenant's alerts");

  webhook
    .command("add")
    .description("add an endpoint and print its signing secret (shown this once)")
    .argument("<tenant>", "the tenant's id or name")
    .argument("<url>", "https://… (private addresses only with WEBHOOK_ALLOW_PRIVATE_ADDRESSES=yes)")
    .option("--types <rules>", "only these rules' alerts, separated by commas (default: all)")
    .option("--description <text>", "what the endpoint is")
    .option("--json", 'print {"webhookId", "secret"} as JSON')
    .action(
      async (
        reference: string,
        url: string,
        options: { types?: string; description?: string; json?: boolean },
      ) => {
        const { addEndpoint } = await alerts();
        const policy = await endpointPolicy(env);
        const added = await withRuntime(env, async (runtime) => {
          await catchUpTenantTables(runtime);
          const { tenantId } = await resolveTenant(runtime, reference);
          const { runtimeDataKeys } = await import("@dmarc-ledger/runtime");
          const keys = await runtimeDataKeys(runtime, env);
          return answering(() =>
            addEndpoint(
              runtime.store,
              runtime.db as never,
              {
                tenantId,
                url,
                ...(options.types ? { alertTypes: options.types.split(",").map((type) => type.trim()) } : {}),
                ...(options.description ? { description: options.description } : {}),
              },
              cli,
              { ...policy, keys },
            ),
          );
        });
        if (options.json) {
          io.out(JSON.stringify({ webhookId: added.endpointId, secret: added.secret }));
          return;
        }
        io.out(`Added webhook ${added.endpointId}.`);
        io.out(`Its signing secret (shown this once; keep it where the receiver verifies): ${added.secret}`);
      },
    );

  webhook
    .command("list")
    .description("list a tenant's endpoints")
    .argument("<tenant>", "the tenant's id or name")
    .option("--json", "print one JSON object per line")
    .action(async (reference: string, options: { json?: boolean }) => {
      const { listEndpoints } = await alerts();
      const endpoints = await withRuntime(env, async (runtime) => {
        await catchUpAlerts(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        return listEndpoints(runtime.db as never, tenantId);
      });
      for (const endpoint of endpoints) {
        io.out(
          options.json
            ? JSON.stringify(endpoint)
            : `${endpoint.id}  ${endpoint.url}  ${endpointState(endpoint)}  ${endpoint.alert_types.join(",") || "all alerts"}`,
        );
      }
      if (endpoints.length === 0 && !options.json) io.out("No webhooks.");
    });

  for (const [name, enabled] of [
    ["enable", true],
    ["disable", false],
  ] as const) {
    webhook
      .command(name)
      .description(
        enabled
          ? "send to an endpoint again: resumes one the service paused, and sends what it kept"
          : "stop sending to an endpoint",
      )
      .argument("<tenant>", "the tenant's id or name")
      .argument("<webhook-id>", "the endpoint")
      .action(async (reference: string, endpointId: string) => {
        const { changeEndpoint, sendKeptDeliveries } = await alerts();
        const policy = await endpointPolicy(env);
        await withRuntime(env, async (runtime) => {
          await catchUpTenantTables(runtime);
          const { tenantId } = await resolveTenant(runtime, reference);
          await answering(() =>
            changeEndpoint(runtime.store, { tenantId, endpointId, enabled }, cli, policy),
          );
          if (enabled) await sendKeptDeliveries(runtime.db, endpointId);
        });
        io.out(`Webhook ${endpointId} is ${enabled ? "enabled (resumed if it was paused)" : "disabled"}.`);
      });
  }

  webhook
    .command("deliveries")
    .description("an endpoint's delivery log, newest first: status, attempts, last error")
    .argument("<tenant>", "the tenant's id or name")
    .argument("<webhook-id>", "the endpoint")
    .option("--json", "print one JSON object per line")
    .action(async (reference: string, endpointId: string, options: { json?: boolean }) => {
      const { listDeliveries } = await alerts();
      const log = await withRuntime(env, async (runtime) => {
        await catchUpAlerts(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        return listDeliveries(runtime.db as never, tenantId, endpointId, { limit: 100, offset: 0 });
      });
      if (!log) throw new CliError(`no webhook endpoint ${endpointId}`);
      for (const record of log.records) {
        io.out(
          options.json
            ? JSON.stringify(record)
            : `${record.id}  ${record.status}  ${record.attempts} attempt(s)${record.last_error ? `  last error: ${record.last_error}` : ""}`,
        );
      }
    });

  webhook
    .command("redeliver")
    .description("send a delivery again, with the same webhook-id and body")
    .argument("<tenant>", "the tenant's id or name")
    .argument("<delivery-id>", "from `webhook deliveries`")
    .action(async (reference: string, deliveryId: string) => {
      const { redeliver } = await alerts();
      await withRuntime(env, async (runtime) => {
        await catchUpAlerts(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        await answering(() => redeliver(runtime.db as never, { tenantId, deliveryId }));
      });
      io.out(`Delivery ${deliveryId} will be sent again.`);
    });
}
