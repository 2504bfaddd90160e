/**
 * The built-in tools as one `ToolPlugin`. Each tool lives in its own folder (`read/ReadTool.ts`,
 * `glob/GlobTool.ts`, …); this module lists them and merges the layers they need.
 */
import { ToolPlugin } from "@toolwright/core"

export const tools = [] as const

export const plugin = ToolPlugin.make({
  name: "@toolwright/tools-builtin",
  version: "0.1.0",
  tools
})
