import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiClient, type ApiError } from "./api/api-client.js";
import { clearToken, readToken } from "./api/session-token.js";
import { ErrorBox } from "./components/error-box.js";
import { useStore } from "./components/hooks.js";
import { linkClick, type Route, routePath, useRoute } from "./components/router.js";
import { ClusterStore } from "./model/cluster-store.js";
import { EventsView } from "./views/events-view.js";
import { OverviewView } from "./views/overview-view.js";
import { PlanView } from "./views/plan-view.js";
import { SignIn } from "./views/sign-in.js";
import { WorkloadDetail } from "./views/workload-detail.js";
import { WorkloadsView } from "./views/workloads-view.js";

type Auth = { state: "checking" } | { state: "signed-out"; notice?: ApiError } | { state: "in"; open: boolean };

/**
 * The console: decides whether sign-in is needed (a server that answers GET /v1/nodes without a
 * token needs none), then shows the views. Any 401 afterwards returns to the sign-in page.
 */
export function App() {
  const [auth, setAuth] = useState<Auth>({ state: "checking" });
  const check = async () => {
    const token = readToken();
    const probe = new ApiClient({ token: () => token });
    try {
      await probe.get("/v1/nodes?pageSize=1");
      setAuth({ state: "in", open: !token });
    } catch (e) {
      const error = e as ApiError;
      if (error.status === 401) {
        if (token) clearToken();
        setAuth({ state: "signed-out", ...(token ? { notice: error } : {}) });
      } else setAuth({ state: "in", open: !token });
    }
  };
  useEffect(() => void check(), []);
  if (auth.state === "checking") return <p class="muted center">Connecting…</p>;
  if (auth.state === "signed-out") return <SignIn notice={auth.notice} onSignedIn={check} />;
  return (
    <Console
      open={auth.open}
      onSignOut={(notice) => {
        clearToken();
        setAuth({ state: "signed-out", ...(notice ? { notice } : {}) });
      }}
    />
  );
}

const nav: { route: Route; label: string }[] = [
  { route: { view: "overview" }, label: "Cluster" },
  { route: { view: "workloads" }, label: "Workloads" },
  { route: { view: "plan" }, label: "Plan" },
  { route: { view: "events" }, label: "Events" },
];

function Console({ open, onSignOut }: { open: boolean; onSignOut: (notice?: ApiError) => void }) {
  const route = useRoute();
  const { api, store } = useMemo(() => {
    const api = new ApiClient({ token: readToken, onUnauthenticated: (e) => onSignOut(e) });
    return { api, store: new ClusterStore() };
  }, []);
  useEffect(() => {
    const abort = new AbortController();
    void store.start(api, abort.signal);
    return () => abort.abort();
  }, []);
  useStore(store);
  const current = route.view === "workload" ? "workloads" : route.view;
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Persys</span>
        <nav aria-label="Views">
          {nav.map((item) => (
            <a
              key={item.label}
              href={routePath(item.route)}
              onClick={linkClick}
              aria-current={item.route.view === current ? "page" : undefined}
            >
              {item.label}
            </a>
          ))}
        </nav>
        <span class="spacer" />
        {open ? (
          <span class="muted">no sign-in needed</span>
        ) : (
          <button type="button" onClick={() => onSignOut()}>
            Sign out
          </button>
        )}
      </header>
      {store.error ? (
        <div class="banner">
          <ErrorBox error={store.error} title="Live updates" />
        </div>
      ) : null}
      <main id="main" tabIndex={-1}>
        {route.view === "overview" ? <OverviewView store={store} api={api} /> : null}
        {route.view === "workloads" ? <WorkloadsView store={store} /> : null}
        {route.view === "workload" ? <WorkloadDetail key={route.id} id={route.id} api={api} store={store} /> : null}
        {route.view === "plan" ? <PlanView api={api} {...(route.from ? { from: route.from } : {})} /> : null}
        {route.view === "events" ? <EventsView store={store} /> : null}
      </main>
    </>
  );
}
