import { defineProject } from "vitest/config"
import { sourceAliases } from "../../vitest.shared.mjs"

export default defineProject({
  resolve: { alias: sourceAliases },
  test: {
    name: "mcp",
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000
  }
})
