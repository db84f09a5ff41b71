import { useEffect, useState } from "preact/hooks";

/** Where the console is served; every route is under it. */
export const BASE = "/ui";

/** The console's routes, parsed from the path under /ui. */
export type Route =
  | { readonly view: "overview" }
  | { readonly view: "workloads" }
  | { readonly view: "workload"; readonly id: string }
  | { readonly view: "plan"; readonly from?: string }
  | { readonly view: "events" };

/** Reads a route from a path and search string (unknown paths are the overview). */
export function parseRoute(pathname: string, search = ""): Route {
  const path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "workloads" && parts[1]) return { view: "workload", id: parts[1] };
  if (parts[0] === "workloads") return { view: "workloads" };
  if (parts[0] === "plan") {
    const from = new URLSearchParams(search).get("from");
    return from ? { view: "plan", from } : { view: "plan" };
  }
  if (parts[0] === "events") return { view: "events" };
  return { view: "overview" };
}

/** The path of a route. */
export function routePath(route: Route): string {
  switch (route.view) {
    case "overview":
      return `${BASE}/`;
    case "workloads":
      return `${BASE}/workloads`;
    case "workload":
      return `${BASE}/workloads/${encodeURIComponent(route.id)}`;
    case "plan":
      return `${BASE}/plan${route.from ? `?from=${encodeURIComponent(route.from)}` : ""}`;
    case "events":
      return `${BASE}/events`;
  }
}

/** Goes to a path under /ui without reloading. */
export function navigate(path: string): void {
  history.pushState(null, "", path);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** The current route, following back/forward and navigate(). */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname, location.search));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname, location.search));
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  return route;
}

/** An onClick for <a href>: in-app navigation unless a modifier asks for a new tab. */
export function linkClick(e: MouseEvent): void {
  const a = e.currentTarget as HTMLAnchorElement;
  if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute("href") ?? `${BASE}/`);
}
