import type { Role } from "@dmarc-ledger/events";
import type { Runtime } from "@dmarc-ledger/runtime";
import { type Command, Option } from "commander";
import { CliError, type CliIO } from "../io.js";
import { catchUpTenantTables, resolveTenant } from "../tenant-ref.js";
import { withRuntime } from "../with-runtime.js";

const cli = { causedBy: "process:cli" };

/** Loaded when a command runs: `--help` never pays for argon2 and the rest. */
const users = () => import("@dmarc-ledger/users");

/** The keys people's addresses are sealed with (docs/privacy.md, "People"). */
async function dataKeysOf(runtime: Runtime, env: NodeJS.ProcessEnv) {
  const { runtimeDataKeys } = await import("@dmarc-ledger/runtime");
  return runtimeDataKeys(runtime, env);
}

/** The people tables as of every event stored (the service's projector may not run: embedded, stopped). */
async function catchUpPeople(runtime: Runtime): Promise<void> {
  await catchUpTenantTables(runtime);
  const [{ catchUp }, { usersProjections }] = await Promise.all([
    import("@dmarc-ledger/projection-engine"),
    import("@dmarc-ledger/users/projection"),
  ]);
  await catchUp({ store: runtime.store, db: runtime.db, projections: usersProjections });
}

export function registerUserCommands(program: Command, io: CliIO, env: NodeJS.ProcessEnv): void {
  const user = program.command("user").description("people who sign in to the dashboard");

  user
    .command("add")
    .description(
      "make an address a member of a tenant with a role (or change its role) and print a one-time set-password link",
    )
    .argument("<tenant>", "the tenant's id or name")
    .argument("<email>", "the person's e-mail address")
    .addOption(
      new Option("--role <role>", "admin (every write, people and keys) or viewer (read only)")
        .choices(["admin", "viewer"])
        .makeOptionMandatory(),
    )
    .option("--json", 'print {"userId", "email", "setPasswordUrl", "expiresAt"} as JSON')
    .action(async (reference: string, email: string, options: { role: Role; json?: boolean }) => {
      const [
        { addUser, InvalidEmailError, LastAdminError, setPasswordUrl, userSettingsFromEnv },
        { dashboardUrlFromEnv },
      ] = await Promise.all([users(), import("@dmarc-ledger/api/config")]);
      const settings = userSettingsFromEnv(env);
      const dashboardUrl = dashboardUrlFromEnv(env);
      const added = await withRuntime(env, async (runtime) => {
        await catchUpPeople(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        const keys = await dataKeysOf(runtime, env);
        try {
          return await addUser(
            runtime.store,
            runtime.db as never,
            keys,
            { tenantId, email, role: options.role, linkTtlMs: settings.passwordLinkTtlMs },
            cli,
          );
        } catch (error) {
          if (error instanceof InvalidEmailError || error instanceof LastAdminError) {
            throw new CliError(error.message);
          }
          throw error;
        }
      });
      const url = setPasswordUrl(dashboardUrl, added.link);
      if (options.json) {
        io.out(
          JSON.stringify({
            userId: added.userId,
            email: added.email,
            setPasswordUrl: url,
            expiresAt: added.link.expiresAt.toISOString(),
          }),
        );
        return;
      }
      const what =
        added.outcome === "created" ? "added as" : added.outcome === "granted" ? "is now" : "stays";
      io.out(`${added.email} ${what} ${options.role} (user ${added.userId}).`);
      io.out(`One-time link to set the password (until ${added.link.expiresAt.toISOString()}):`);
      io.out(`  ${url}`);
    });

  user
    .command("list")
    .description("list a tenant's people: address, role, password set, last sign-in")
    .argument("<tenant>", "the tenant's id or name")
    .option("--json", "print one JSON object per line")
    .action(async (reference: string, options: { json?: boolean }) => {
      const { listTenantUsers } = await users();
      const members = await withRuntime(env, async (runtime) => {
        await catchUpPeople(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        return listTenantUsers(runtime.db as never, await dataKeysOf(runtime, env), tenantId);
      });
      for (const member of members) {
        io.out(
          options.json
            ? JSON.stringify(member)
            : `${member.userId}  ${member.email ?? "(removed)"}  ${member.role}  ${member.passwordSet ? "password set" : "no password yet"}  last sign-in ${member.lastSignInAt?.toISOString() ?? "never"}`,
        );
      }
      if (members.length === 0 && !options.json) {
        io.out(`No people yet: \`dmarc-ledger user add ${reference} EMAIL --role admin\`.`);
      }
    });

  user
    .command("remove")
    .description(
      "take an address out of a tenant; a person of no other tenant is erased (their address can never be read again)",
    )
    .argument("<tenant>", "the tenant's id or name")
    .argument("<email>", "the person's e-mail address")
    .action(async (reference: string, email: string) => {
      const { findUserId, InvalidEmailError, LastAdminError, removeUser, UnknownUserError } = await users();
      const done = await withRuntime(env, async (runtime) => {
        await catchUpPeople(runtime);
        const { tenantId } = await resolveTenant(runtime, reference);
        const keys = await dataKeysOf(runtime, env);
        try {
          const userId = await findUserId(runtime.store, runtime.db as never, keys, email);
          if (!userId) throw new UnknownUserError(`${email} has no account.`);
          const removed = await removeUser(runtime.store, runtime.db as never, { tenantId, userId }, cli);
          await catchUpPeople(runtime);
          return { userId, ...removed };
        } catch (error) {
          if (
            error instanceof InvalidEmailError ||
            error instanceof LastAdminError ||
            error instanceof UnknownUserError
          ) {
            throw new CliError(error.message);
          }
          throw error;
        }
      });
      io.out(
        done.erased
          ? `Removed user ${done.userId} from the tenant and erased them: no other tenant had them, their address is shredded.`
          : `Removed user ${done.userId} from the tenant; another tenant still has them.`,
      );
    });
}
