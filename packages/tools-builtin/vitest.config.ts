import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "tools-builtin",
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000
  }
})
