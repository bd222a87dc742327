import { defineConfig } from "vite";

// Preact's JSX through Vite's own transformer (no Babel preset): `jsxImportSource` in
// tsconfig.json is what the type check reads; this is what the build compiles with.
export default defineConfig({
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // Sizes are printed gzipped by scripts/build-web.mjs, against the budget.
    reportCompressedSize: false,
    chunkSizeWarningLimit: 1024,
  },
});
