import { useEffect, useState } from "preact/hooks";
import { ApiError, apiGet, apiWrite, setCsrfToken, whenSignedOut } from "./api/client.js";
import type { Caller } from "./api/types.js";
import { forgetAnswers } from "./api/use-api.js";
import { FiltersBar } from "./components/filters-bar.js";
import { Loading, Notice } from "./components/notice.js";
import { sharedParams } from "./lib/filters.js";
import { navigate, useLocation } from "./lib/router.js";
import { Alerts } from "./views/alerts.js";
import { AppLink } from "./views/app-link.js";
import { Domains } from "./views/domains.js";
import { FailureReports } from "./views/failure-reports.js";
import { Intake } from "./views/intake.js";
import { Overview } from "./views/overview.js";
import { Policy } from "./views/policy.js";
import { Reporters } from "./views/reporters.js";
import { Senders } from "./views/senders.js";
import { SetPassword } from "./views/set-password.js";
import { Settings } from "./views/settings.js";
import { SignIn } from "./views/sign-in.js";
import { Tls } from "./views/tls.js";

interface ViewProps {
  caller: Caller;
  features: ReadonlySet<string>;
  onSignedOut: () => void;
}

interface ViewEntry {
  path: string;
  label: string;
  /** The API endpoint the view cannot do without: it is in the navigation once GET /api/ links it. */
  needs?: string;
  filters: "all" | "domain" | "none";
  render: (props: ViewProps) => preact.JSX.Element;
}

const views: ViewEntry[] = [
  {
    path: "/",
    label: "Overview",
    filters: "all",
    render: (p) => <Overview caller={p.caller} features={p.features} />,
  },
  {
    path: "/senders",
    label: "Senders",
    filters: "all",
    render: (p) => <Senders caller={p.caller} features={p.features} />,
  },
  {
    path: "/policy",
    label: "Policy",
    needs: "policy_impact",
    filters: "all",
    render: (p) => <Policy features={p.features} />,
  },
  { path: "/reporters", label: "Reporters", filters: "all", render: () => <Reporters /> },
  { path: "/failures", label: "Failure reports", filters: "all", render: () => <FailureReports /> },
  // SMTP TLS reports (RFC 8460, issue 43).
  { path: "/tls", label: "TLS", needs: "tls_by_domain", filters: "all", render: () => <Tls /> },
  { path: "/domains", label: "Domains", filters: "domain", render: (p) => <Domains caller={p.caller} /> },
  { path: "/intake", label: "Intake", filters: "all", render: (p) => <Intake caller={p.caller} /> },
  // The alerts, their rules and the webhooks that carry them (issue 42, docs/dashboard.md).
  {
    path: "/alerts",
    label: "Alerts",
    needs: "alerts",
    filters: "all",
    render: (p) => <Alerts caller={p.caller} />,
  },
  {
    path: "/settings",
    label: "Settings",
    filters: "none",
    render: (p) => <Settings caller={p.caller} onSignedOut={p.onSignedOut} />,
  },
];

function Shell({ caller, features, onSignedOut }: ViewProps) {
  const { path, params } = useLocation();
  const available = views.filter((view) => !view.needs || features.has(view.needs));
  const view = available.find((entry) => entry.path === path);
  const keep = sharedParams(params);
  useEffect(() => {
    document.title = view ? `${view.label} · ${caller.tenant.name} · dmarc-ledger` : "dmarc-ledger";
  }, [view, caller]);
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <div class="topbar-inner">
          <span class="brand">
            <span class="brand-mark" aria-hidden="true" />
            dmarc-ledger
          </span>
          <span class="tenant" title="Account">
            {caller.tenant.name}
          </span>
          <span class="who">
            <span class="who-email">{caller.user?.email}</span>
            <span class="role">{caller.role}</span>
            <button
              type="button"
              class="link-button"
              onClick={async () => {
                await apiWrite("PUT", "sign_out", {}).catch(() => {});
                onSignedOut();
              }}
            >
              Sign out
            </button>
          </span>
        </div>
        <nav class="tabs" aria-label="Views">
          {available.map((entry) => (
            <AppLink
              key={entry.path}
              href={`${entry.path}${entry.filters === "none" ? "" : keep}`}
              current={entry === view}
            >
              {entry.label}
            </AppLink>
          ))}
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        <h1 class="view-title">{view?.label ?? "Not found"}</h1>
        {view && view.filters !== "none" ? <FiltersBar period={view.filters === "all"} /> : null}
        {view ? (
          view.render({ caller, features, onSignedOut })
        ) : (
          <Notice>
            There is no page at {path}. <AppLink href={`/${keep}`}>Go to the overview</AppLink>.
          </Notice>
        )}
      </main>
    </>
  );
}

/** The endpoints the API links from its root: a view that needs one not there yet is not shown. */
async function loadFeatures(): Promise<Set<string>> {
  const root = await apiGet<{ links: Record<string, string> }>("");
  return new Set(Object.keys(root.links));
}

export function App() {
  const { path } = useLocation();
  const [caller, setCaller] = useState<Caller | null | undefined>(undefined);
  const [features, setFeatures] = useState<Set<string> | null>(null);
  const [failure, setFailure] = useState<string | null>(null);

  const signedIn = (next: Caller) => {
    setCsrfToken(next.csrf_token);
    forgetAnswers();
    setCaller(next);
  };
  const signedOut = () => {
    setCsrfToken(null);
    forgetAnswers();
    setFeatures(null);
    setCaller(null);
  };

  useEffect(() => {
    whenSignedOut(signedOut);
    if (path === "/set-password") {
      setCaller(null);
      return;
    }
    apiGet<Caller>("session").then(signedIn, (error) => {
      if (error instanceof ApiError && error.status === 401) setCaller(null);
      else setFailure(error instanceof Error ? error.message : String(error));
    });
  }, []);

  useEffect(() => {
    if (caller && !features) loadFeatures().then(setFeatures, (error) => setFailure(String(error)));
  }, [caller, features]);

  if (failure) return <Notice kind="error">The dashboard cannot reach the API: {failure}</Notice>;
  if (path === "/set-password") {
    return (
      <SetPassword
        onSignedIn={(next) => {
          signedIn(next);
          navigate("/", { replace: true });
        }}
      />
    );
  }
  if (caller === undefined) return <Loading what="the dashboard" />;
  if (caller === null) return <SignIn onSignedIn={signedIn} />;
  if (!features) return <Loading what="the dashboard" />;
  return <Shell caller={caller} features={features} onSignedOut={signedOut} />;
}
