import { defineConfig } from "vite";

// The console is served by persys-server at /ui; everything is bundled (no asset from the internet).
export default defineConfig({
  root: import.meta.dirname,
  base: "/ui/",
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", sourcemap: true, chunkSizeWarningLimit: 400 },
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
});
