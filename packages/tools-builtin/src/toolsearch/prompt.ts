/**
 * The ToolSearch tool's texts. Models know the tool from Claude Code: the same query modes, the same
 * `<available-deferred-tools>` list, the same answer when nothing matches.
 */
import { ToolSearch } from "@toolwright/core"

export const DESCRIPTION = "Search for or select deferred tools to make them available for use."

export const PROMPT = `${DESCRIPTION}

**MANDATORY PREREQUISITE - THIS IS A HARD REQUIREMENT**

You MUST load a deferred tool with this tool BEFORE calling it. Deferred tools are announced by name only, in <available-deferred-tools> messages; they cannot be called until they are loaded. Both query modes load the tools they return: once a tool appears in the results, call it directly.

Query modes:

1. Direct selection - "select:<tool_name>" when you know the name; several at once with commas:
   - "select:mcp__slack__read_channel"
   - "select:NotebookEdit,mcp__github__create_issue"

2. Keyword search - words describing what you need, when you do not know the name:
   - "slack message", "list directory", "jupyter"
   - "+github issue" requires "github" and ranks by the other words
   - Returns up to ${ToolSearch.DEFAULT_MAX_RESULTS} tools (max_results), best match first`

export const QUERY_DESCRIPTION =
  `Query to find deferred tools. Use "select:<tool_name>" for direct selection, or keywords to search.`

export const MAX_RESULTS_DESCRIPTION =
  `Maximum number of results to return (default: ${ToolSearch.DEFAULT_MAX_RESULTS})`

export const NO_MATCHES = "No matching deferred tools found"

export const invalidMaxResults = (value: number): string =>
  `max_results must be a whole number from 1 to 100, got ${value}. ` +
  `Omit it to get up to ${ToolSearch.DEFAULT_MAX_RESULTS} results.`
