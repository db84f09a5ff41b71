import { existsSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, extname, join, normalize, sep } from "node:path";
import type { FastifyInstance, FastifyReply } from "fastify";

export interface UiRoutesOptions {
  /** Folder of the built console (index.html, assets/). Default: the `dist` of the @persys/ui package. */
  readonly distDir?: string;
}

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

/** Where the built console is: `<@persys/ui>/dist`, or undefined when the package cannot be found. */
export function defaultUiDist(): string | undefined {
  try {
    const pkg = createRequire(import.meta.url).resolve("@persys/ui/package.json");
    return join(dirname(pkg), "dist");
  } catch {
    return undefined;
  }
}

/**
 * The web console at `/ui`: the static files of the Vite bundle with their content types, hashed
 * `assets/` cached for a year (immutable), `index.html` revalidated on every load, and every other
 * path under `/ui/` answered with index.html (the console routes in the browser). `/ui` redirects to
 * `/ui/`. When the bundle is not built, `/ui` answers 503 with a text saying how to build it.
 *
 * The console talks to the public `/v1` API with the user's token; these routes need none (the files
 * hold no data).
 */
export async function registerUiRoutes(app: FastifyInstance, options: UiRoutesOptions = {}): Promise<void> {
  const dist = options.distDir ?? defaultUiDist();
  const serve = async (path: string, reply: FastifyReply) => {
    if (!dist || !existsSync(join(dist, "index.html"))) {
      return reply
        .status(503)
        .type("text/plain; charset=utf-8")
        .header("cache-control", "no-store")
        .send(
          "The web console is not built. Build it with `npm run build` (or `npm run build -w @persys/ui`) " +
            `and restart the server${dist ? ` (looked for ${join(dist, "index.html")})` : ""}.\n`,
        );
    }
    const file = resolveFile(dist, path);
    if (file) {
      const immutable = path.startsWith("assets/");
      return reply
        .type(contentTypes[extname(file)] ?? "application/octet-stream")
        .header("cache-control", immutable ? "public, max-age=31536000, immutable" : "no-cache")
        .header("x-content-type-options", "nosniff")
        .send(await readFile(file));
    }
    // A missing asset is a 404 (a stale page asking for an old hash); any other path is a console route.
    if (path.startsWith("assets/") || /\.[a-z0-9]{1,6}$/i.test(path)) {
      return reply.status(404).type("text/plain; charset=utf-8").send(`Not found: /ui/${path}\n`);
    }
    return reply
      .type(contentTypes[".html"]!)
      .header("cache-control", "no-cache")
      .header("x-content-type-options", "nosniff")
      .send(readFileSync(join(dist, "index.html")));
  };
  const hidden = { schema: { hide: true } };
  app.get("/ui", hidden, async (_request, reply) => reply.redirect("/ui/", 302));
  app.get("/ui/", hidden, async (_request, reply) => serve("", reply));
  app.get<{ Params: { "*": string } }>("/ui/*", hidden, async (request, reply) => serve(request.params["*"], reply));
}

/** The file under `dist` for a request path, or undefined when there is none (or it would leave dist). */
function resolveFile(dist: string, path: string): string | undefined {
  if (path === "" || path.includes("\0")) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  const file = normalize(join(dist, decoded));
  if (!file.startsWith(dist.endsWith(sep) ? dist : dist + sep)) return undefined;
  try {
    return statSync(file).isFile() ? file : undefined;
  } catch {
    return undefined;
  }
}
