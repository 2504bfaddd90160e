/**
 * ToolSearch: loads deferred tools. The query selects tools by name (`select:A,B`) or searches the
 * deferred tools' names, search hints and descriptions; the result is a list of `tool_reference` blocks,
 * which the API expands into the tools' definitions. The pool comes from `ToolSearch.DeferredTools`, the
 * service the runtime points at the pool of the current request.
 */
import { Message, Tool, ToolErrors, ToolSearch } from "@toolwright/core"
import { Effect, Schema } from "effect"
import * as Prompt from "./prompt.js"

export const ToolSearchInput = Schema.Struct({
  query: Schema.String.annotations({ description: Prompt.QUERY_DESCRIPTION }),
  max_results: Schema.optional(Schema.Number.annotations({ description: Prompt.MAX_RESULTS_DESCRIPTION }))
})
export type ToolSearchInput = typeof ToolSearchInput.Type

export const ToolSearchOutput = Schema.Struct({
  matches: Schema.Array(Schema.String),
  query: Schema.String,
  total_deferred_tools: Schema.Number
})
export type ToolSearchOutput = typeof ToolSearchOutput.Type

// Type arguments spelled out: the output type comes from `call` alone, whatever `mapToolResult` says.
export const ToolSearchTool = Tool.make<
  typeof ToolSearch.TOOL_SEARCH_TOOL_NAME,
  typeof ToolSearchInput,
  ToolSearchOutput
>({
  name: ToolSearch.TOOL_SEARCH_TOOL_NAME,
  description: Prompt.DESCRIPTION,
  prompt: Prompt.PROMPT,
  input: ToolSearchInput,
  output: ToolSearchOutput,
  source: "builtin",
  // The way to every deferred tool is never deferred itself.
  alwaysLoad: true,
  maxResultSizeChars: 100_000,
  isReadOnly: () => true,
  isConcurrencySafe: () => true,
  validateInput: (input) =>
    input.max_results === undefined ||
      (Number.isInteger(input.max_results) && input.max_results >= 1 && input.max_results <= 100)
      ? Effect.void
      : Effect.fail(new ToolErrors.ToolError({ message: Prompt.invalidMaxResults(input.max_results) })),
  call: Effect.fnUntraced(function*(input: ToolSearchInput) {
    const deferredTools = yield* ToolSearch.DeferredTools
    const { plan, pool } = yield* deferredTools.current
    const matches = ToolSearch.searchTools(input.query, pool, plan.deferred, input.max_results)
    return { matches, query: input.query, total_deferred_tools: plan.deferred.size } satisfies ToolSearchOutput
  }),
  mapToolResult: (output: ToolSearchOutput): Message.ToolResultContent =>
    output.matches.length === 0
      ? Prompt.NO_MATCHES
      : output.matches.map((name) => ({ type: "tool_reference" as const, tool_name: name }))
})
