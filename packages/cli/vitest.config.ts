import { defineProject } from "vitest/config"
import { sourceAliases } from "../../vitest.shared.mjs"

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: "cli",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 30_000
  }
})
