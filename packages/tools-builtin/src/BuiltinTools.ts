/**
 * The built-in tools as one `ToolPlugin`. Each tool lives in its own folder (`read/ReadTool.ts`,
 * `glob/GlobTool.ts`, …); this module lists them and merges the layers they need.
 */
import type { Tool } from "@toolwright/core"
import { ToolPlugin } from "@toolwright/core"
import * as BashServices from "./bash/BashServices.js"
import { BashTool } from "./bash/BashTool.js"
import { EditTool } from "./edit/EditTool.js"
import { GlobTool } from "./glob/GlobTool.js"
import { GrepTool } from "./grep/GrepTool.js"
import { NotebookEditTool } from "./notebook/NotebookEditTool.js"
import { ReadTool } from "./read/ReadTool.js"
import { TaskOutputTool } from "./tasks/TaskOutputTool.js"
import { TaskStopTool } from "./tasks/TaskStopTool.js"
import { ToolSearchTool } from "./toolsearch/ToolSearchTool.js"
import { WriteTool } from "./write/WriteTool.js"

export const tools: ReadonlyArray<Tool.AnyWith<BashServices.BashServices>> = [
  BashTool,
  EditTool,
  GlobTool,
  GrepTool,
  NotebookEditTool,
  ReadTool,
  TaskOutputTool,
  TaskStopTool,
  ToolSearchTool,
  WriteTool
]

/** The plugin with options: `env` (settings `env`) is given to every Bash command. */
export const make = (options: BashServices.Options = {}) =>
  ToolPlugin.make({
    name: "@toolwright/tools-builtin",
    version: "0.1.0",
    tools,
    layer: BashServices.layer(options)
  })

export const plugin = make()
