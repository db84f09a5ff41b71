import { defineConfig } from "vitest/config";

// Packages export their TypeScript sources under the "development" condition, so tests run on the
// sources without a build. Unit tests sit beside the code; cross-package suites live in test/.
export default defineConfig({
  resolve: { conditions: ["development"] },
  ssr: { resolve: { conditions: ["development"] } },
  test: {
    // Tests never read or write the persysctl config of the person running them (persys up writes a
    // context): suites that want one set PERSYS_CONFIG to a file of their own.
    env: { PERSYS_CONFIG: "/nonexistent/persys-test-client-config.yaml" },
    projects: [
      {
        extends: true,
        test: { name: "unit", include: ["*/src/**/*.test.ts"], testTimeout: 20_000 },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
