/**
 * Test support for the Write/Edit/NotebookEdit tests: a session that may write (bypassPermissions, as
 * after the user said yes), and calls through the whole pipeline with Read registered beside them so
 * tests read files the way a model does.
 */
import * as fs from "node:fs"
import type { Tool } from "@toolwright/core"
import { Permission, ToolUseContext } from "@toolwright/core"
import { EditTool } from "../../src/edit/EditTool.js"
import { NotebookEditTool } from "../../src/notebook/NotebookEditTool.js"
import { ReadTool } from "../../src/read/ReadTool.js"
import { WriteTool } from "../../src/write/WriteTool.js"
import { callTool } from "./runTool.js"

export const fileTools: ReadonlyArray<Tool.Any> = [ReadTool, WriteTool, EditTool, NotebookEditTool]

/** A session whose writes are allowed, so tests exercise the tools rather than the prompter. */
export const writableContext = (cwd: string): ToolUseContext.ToolUseContext =>
  ToolUseContext.make({ cwd, permissionContext: Permission.emptyPermissionContext("bypassPermissions") })

export const call = (name: string, input: unknown, context: ToolUseContext.ToolUseContext) =>
  callTool(fileTools, name, input, context)

/** Wraps an error text the way the pipeline hands it to the model. */
export const toolUseError = (message: string) => `<tool_use_error>${message}</tool_use_error>`

/** Moves a file's mtime without changing its bytes. */
export const touch = (file: string, secondsAhead = 5): void => {
  const when = new Date(Date.now() + secondsAhead * 1000)
  fs.utimesSync(file, when, when)
}
