import { useState } from "preact/hooks";
import { apiWrite } from "../api/client.js";
import type { ActivityRecord, ApiKeyRecord, Caller, ListAnswer, UserRecord } from "../api/types.js";
import { useApi } from "../api/use-api.js";
import { Card } from "../components/card.js";
import { type Column, DataTable } from "../components/data-table.js";
import { ErrorNotice, Loading, Notice } from "../components/notice.js";
import { formatTime } from "../lib/format.js";
import { AppLink } from "./app-link.js";
import { ShownOnce, useAction } from "./write-actions.js";

function People({ caller }: { caller: Caller }) {
  const users = useApi<ListAnswer<UserRecord>>("users");
  const action = useAction();
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<"viewer" | "admin">("viewer");
  const [link, setLink] = useState<{ email: string; url: string; expires: string } | null>(null);
  const columns: Column<UserRecord>[] = [
    { key: "email", label: "E-mail", value: (r) => r.Email },
    {
      key: "role",
      label: "Role",
      value: (r) => r.Role,
      render: (r) => (
        <select
          aria-label={`Role of ${r.Email}`}
          value={r.Role}
          onChange={(event) =>
            action.run(() =>
              apiWrite("PUT", "user_role", {
                user_id: r.UserId,
                role: (event.currentTarget as HTMLSelectElement).value,
              }),
            )
          }
        >
          <option value="viewer">viewer</option>
          <option value="admin">admin</option>
        </select>
      ),
    },
    { key: "password", label: "Password", value: (r) => (r.PasswordSet ? "set" : "not yet") },
    {
      key: "signin",
      label: "Last sign-in",
      value: (r) => r.LastSignIn,
      render: (r) => formatTime(r.LastSignIn),
    },
    {
      key: "actions",
      label: "Actions",
      value: () => null,
      render: (r) => (
        <span class="row-actions">
          <button
            type="button"
            class="link-button"
            onClick={async () => {
              const answer = await action.run(() =>
                apiWrite<{ set_password_url: string; expires_at: string }>("PUT", "password_link", {
                  user_id: r.UserId,
                }),
              );
              if (answer)
                setLink({ email: r.Email, url: answer.set_password_url, expires: answer.expires_at });
            }}
          >
            New link
          </button>
          {r.UserId !== caller.user?.id ? (
            <button
              type="button"
              class="link-button danger"
              onClick={() => {
                if (
                  confirm(
                    `Remove ${r.Email} from ${caller.tenant.name}? Unless another account has them, their address is erased for good.`,
                  )
                ) {
                  action.run(() => apiWrite("PUT", "remove_user", { user_id: r.UserId }));
                }
              }}
            >
              Remove
            </button>
          ) : null}
        </span>
      ),
    },
  ];
  return (
    <Card title="People" id="people" wide>
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          const answer = await action.run(() =>
            apiWrite<{ email: string; set_password_url: string; expires_at: string }>("PUT", "add_user", {
              email,
              role,
            }),
          );
          if (answer) {
            setLink({ email: answer.email, url: answer.set_password_url, expires: answer.expires_at });
            setEmail("");
          }
        }}
      >
        <label class="field">
          <span>E-mail address</span>
          <input
            type="email"
            required
            value={email}
            onInput={(e) => setEmail((e.currentTarget as HTMLInputElement).value)}
          />
        </label>
        <label class="field">
          <span>Role</span>
          <select
            value={role}
            onChange={(e) => setRole((e.currentTarget as HTMLSelectElement).value as "viewer" | "admin")}
          >
            <option value="viewer">viewer: reads everything</option>
            <option value="admin">admin: every change, people and keys</option>
          </select>
        </label>
        <button type="submit" class="button button-primary">
          Add person
        </button>
      </form>
      <ErrorNotice error={action.error} />
      {link ? (
        <ShownOnce
          label={`Set-password link for ${link.email}`}
          value={link.url}
          note={`works once, until ${formatTime(link.expires)}. Send it to them; it is not shown again.`}
        />
      ) : null}
      {users.loading && !users.data ? (
        <Loading what="the people" />
      ) : (
        <DataTable
          id="people"
          caption={`People of ${caller.tenant.name}`}
          columns={columns}
          rows={users.data?.records ?? []}
          rowKey={(r) => r.UserId}
          defaultSort="email"
          csvName="people.csv"
        />
      )}
    </Card>
  );
}

const scopes = ["read", "write", "ingest"] as const;

function ApiKeys() {
  const keys = useApi<ListAnswer<ApiKeyRecord>>("api_keys");
  const action = useAction();
  const [chosen, setChosen] = useState<Set<string>>(new Set(["read"]));
  const [issued, setIssued] = useState<string | null>(null);
  const columns: Column<ApiKeyRecord>[] = [
    { key: "prefix", label: "Key", value: (r) => `${r.Prefix}…` },
    { key: "scopes", label: "Scopes", value: (r) => r.Scopes.join(", ") },
    { key: "created", label: "Issued", value: (r) => r.Created, render: (r) => formatTime(r.Created) },
    {
      key: "state",
      label: "State",
      value: (r) => (r.Revoked ? `revoked ${formatTime(r.Revoked)}` : "active"),
      render: (r) =>
        r.Revoked ? (
          <span class="muted">revoked {formatTime(r.Revoked)}</span>
        ) : (
          <button
            type="button"
            class="link-button danger"
            onClick={() => {
              if (confirm(`Revoke ${r.Prefix}…? Programs using it stop working.`)) {
                action.run(() => apiWrite("PUT", "revoke_api_key", { key_id: r.KeyId }));
              }
            }}
          >
            Revoke
          </button>
        ),
    },
  ];
  return (
    <Card title="API keys" id="api-keys" wide>
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          const answer = await action.run(() =>
            apiWrite<{ api_key: string }>("PUT", "issue_api_key", {
              scopes: scopes.filter((s) => chosen.has(s)).join(","),
            }),
          );
          if (answer) setIssued(answer.api_key);
        }}
      >
        <fieldset class="scopes">
          <legend>Scopes of a new key</legend>
          {scopes.map((scope) => (
            <label key={scope} class="check">
              <input
                type="checkbox"
                checked={chosen.has(scope)}
                onChange={(event) => {
                  const next = new Set(chosen);
                  if ((event.currentTarget as HTMLInputElement).checked) next.add(scope);
                  else next.delete(scope);
                  setChosen(next);
                }}
              />
              {scope}
            </label>
          ))}
        </fieldset>
        <button type="submit" class="button button-primary" disabled={chosen.size === 0}>
          Issue key
        </button>
      </form>
      <ErrorNotice error={action.error} />
      {issued ? (
        <ShownOnce
          label="New API key"
          value={issued}
          note="shown this once: keep it in your program's secrets."
        />
      ) : null}
      <DataTable
        id="keys"
        caption="API keys"
        columns={columns}
        rows={keys.data?.records ?? []}
        rowKey={(r) => r.KeyId}
        defaultSort="-created"
        csvName="api-keys.csv"
      />
    </Card>
  );
}

const eventWords: Record<string, string> = {
  UserRoleGranted: "role granted",
  UserRoleRevoked: "removed",
  UserPasswordLinkIssued: "set-password link issued",
  UserPasswordSet: "password set",
  UserSignedIn: "signed in",
  UserSignedOut: "signed out",
  ApiKeyIssued: "API key issued",
  ApiKeyRevoked: "API key revoked",
};

function Activity() {
  const trail = useApi<ListAnswer<ActivityRecord>>("activity", { per_page: 1000 });
  const columns: Column<ActivityRecord>[] = [
    { key: "time", label: "Time", value: (r) => r.Time, render: (r) => formatTime(r.Time) },
    { key: "what", label: "What", value: (r) => eventWords[r.Event] ?? r.Event },
    { key: "whom", label: "Of", value: (r) => r.SubjectEmail ?? r.Subject },
    { key: "who", label: "By", value: (r) => r.CausedByEmail ?? r.CausedBy },
  ];
  return (
    <Card title="Activity" id="activity" wide>
      <DataTable
        id="activity"
        caption="What was done to people and keys, and by whom"
        columns={columns}
        rows={trail.data?.records ?? []}
        rowKey={(r) => `${r.Time}|${r.Event}|${r.Subject}`}
        defaultSort="-time"
        csvName="activity.csv"
        pageSize={10}
      />
    </Card>
  );
}

function Account({ caller, onSignedOut }: { caller: Caller; onSignedOut: () => void }) {
  const action = useAction();
  return (
    <Card title="Your account" id="account">
      <dl class="facts">
        <dt>E-mail</dt>
        <dd>{caller.user?.email ?? "–"}</dd>
        <dt>Role</dt>
        <dd>{caller.role ?? "–"}</dd>
        <dt>Account</dt>
        <dd>{caller.tenant.name}</dd>
        <dt>Session ends</dt>
        <dd>{formatTime(caller.expires_at)} at the latest</dd>
      </dl>
      <button
        type="button"
        class="button"
        onClick={async () => {
          if (await action.run(() => apiWrite("PUT", "sign_out", { everywhere: "true" }))) onSignedOut();
        }}
      >
        Sign out everywhere
      </button>
      <ErrorNotice error={action.error} />
    </Card>
  );
}

/** The account, people and API keys (admins); alert rules and webhooks are in the Alerts view. */
export function Settings({ caller, onSignedOut }: { caller: Caller; onSignedOut: () => void }) {
  const admin = caller.capabilities.includes("admin");
  return (
    <div class="view">
      <Account caller={caller} onSignedOut={onSignedOut} />
      <Notice>
        Alert rules and webhooks, with each webhook's deliveries, are in{" "}
        <AppLink href="/alerts#alert-rules">Alerts</AppLink>.
      </Notice>
      {admin ? (
        <>
          <People caller={caller} />
          <ApiKeys />
          <Activity />
        </>
      ) : (
        <Notice>People and API keys are managed by the account's admins.</Notice>
      )}
    </div>
  );
}
