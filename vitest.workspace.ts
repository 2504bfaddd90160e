// The four package projects; vitest.config.ts runs them as its `projects`.
export default ["packages/core", "packages/tools-builtin", "packages/mcp", "packages/cli"]
