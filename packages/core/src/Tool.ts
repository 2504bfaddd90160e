/**
 * The tool contract. `Tool.make` builds a tool from its Schemas and handler and fills in the optional
 * members with fail-closed defaults in one place: not read-only, not concurrency-safe, not destructive,
 * no tool-specific permission objection (the policy decides, which asks), interrupted on abort.
 */
import { Context, Effect, JSONSchema, Pipeable, Schema } from "effect"
import type { ToolResultContent } from "./Message.js"
import type { PermissionResult } from "./Permission.js"
import { passthrough } from "./Permission.js"
import type { ToolError } from "./ToolErrors.js"
import { providedCalls } from "./internal/providedCalls.js"
import { ToolProgress } from "./ToolProgress.js"
import type { Service as ToolProgressService } from "./ToolProgress.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export const TypeId: unique symbol = Symbol.for("@toolwright/core/Tool")
export type TypeId = typeof TypeId

/** Where a tool comes from; built-ins form the pool's prefix. */
export type Source = "builtin" | "plugin" | "mcp"

/** For tools that proxy an MCP server's tool. */
export interface McpInfo {
  readonly serverName: string
  readonly toolName: string
}

/** A JSON Schema object as sent to a model. */
export type JsonSchema = { readonly [key: string]: unknown }

export type InterruptBehavior = "cancel" | "block"

/**
 * What a call's permission rules are matched against. The policy checks each subject on its own: a deny
 * or ask rule matching any subject applies; an allow rule applies only if every subject is allowed.
 */
export interface RuleSubjects {
  /**
   * Strings that `Tool(specifier)` rules match: for Bash each simple command of a compound line (wrappers
   * stripped), for WebFetch `domain:host`, for Agent the agent's name.
   */
  readonly specifiers: ReadonlyArray<string>
  /**
   * Paths the call reads or writes, absolute; Read/Edit rules apply to them. Give the path as written
   * (resolved against the cwd): the policy resolves symlinks itself and checks both forms (an allow must
   * match the link and its target, a deny either). A tool may also list both forms itself.
   */
  readonly paths: ReadonlyArray<{
    readonly path: string
    readonly access: "read" | "write"
    /**
     * Set when the path is an argument of the command a specifier names (`rm build/x`), not a redirection:
     * inside the working directories it then rides on the rule that allowed the command, a write as well as a
     * read. Deny rules, protected paths and the working-directory check still apply to it.
     */
    readonly argument?: boolean
  }>
  /** Set when the input could not be understood well enough to match rules safely: the call must ask. */
  readonly opaque?: string
}

/**
 * A tool. `Input` is the Schema of its input (a struct); `Output` what `call` succeeds with; `R` the
 * services `call` needs, provided by the tool's plugin layer or the runtime's environment.
 */
export interface Tool<Name extends string, Input extends Schema.Schema.AnyNoContext, Output, R = never>
  extends Pipeable.Pipeable
{
  readonly [TypeId]: TypeId
  readonly name: Name
  /** One line for listings and tool search. */
  readonly description: string
  /** The full instructions sent to the model as the tool's description. */
  readonly prompt: string
  readonly inputSchema: Input
  /** Overrides the JSON Schema derived from `inputSchema` (MCP tools bring their own). */
  readonly inputJsonSchema: JsonSchema | undefined
  readonly outputSchema: Schema.Schema.AnyNoContext | undefined
  readonly progressSchema: Schema.Schema.AnyNoContext | undefined
  /** Results longer than this are persisted and previewed; `Infinity` never persists. */
  readonly maxResultSizeChars: number
  readonly aliases: ReadonlyArray<string>
  readonly searchHint: string | undefined
  readonly shouldDefer: boolean
  readonly alwaysLoad: boolean
  readonly interruptBehavior: InterruptBehavior
  /** Whether this tool's failure cancels its running siblings (Bash does). */
  readonly cascadeOnError: boolean
  /**
   * The longest one call may run, in milliseconds; past it the call is stopped with an error result. Unset:
   * the runtime's default applies; `Infinity`: never stopped by the runtime (the tool bounds itself).
   */
  readonly timeoutMs?: number | undefined
  readonly source: Source
  readonly mcpInfo: McpInfo | undefined

  call(input: Schema.Schema.Type<Input>, context: ToolUseContext): Effect.Effect<Output, unknown, R | ToolProgress>
  mapToolResult(output: Output, toolUseId: string): ToolResultContent
  isEnabled(): boolean
  isConcurrencySafe(input: Schema.Schema.Type<Input>): boolean
  isReadOnly(input: Schema.Schema.Type<Input>): boolean
  isDestructive(input: Schema.Schema.Type<Input>): boolean
  /** Tool-specific objections, run after the rules; `passthrough` lets the policy decide. */
  checkPermissions(input: Schema.Schema.Type<Input>, context: ToolUseContext): Effect.Effect<PermissionResult, never, R>
  /** Checks that need more than the Schema (the file exists, the range is sane). */
  validateInput(input: Schema.Schema.Type<Input>, context: ToolUseContext): Effect.Effect<void, ToolError, R>
  userFacingName(input: Schema.Schema.Type<Input> | undefined): string
  /** A compact rendering of the input for a policy classifier; "" means nothing to classify. */
  toClassifierInput(input: Schema.Schema.Type<Input>): string
  /**
   * What PostToolUse command hooks get as `tool_response` (Claude Code's shape of this tool's result, which
   * hook scripts read fields of: `.tool_response.filePath`, `.tool_response.stdout`). By default the output
   * itself when it is plain JSON data, else `content`, the text the model got.
   */
  toHookResponse(output: Output, content: ToolResultContent): unknown
  /** The file path a call touches, resolved against the cwd, for Read/Edit path rules. */
  getPath(input: Schema.Schema.Type<Input>, context: ToolUseContext): string | undefined
  /** What rules match against; by default the `getPath` path (read if read-only, else write). */
  ruleSubjects(input: Schema.Schema.Type<Input>, context: ToolUseContext): RuleSubjects
}

/** Any tool whose requirements are satisfied: what registries, pools and pipelines hold. */
export type Any = Tool<string, Schema.Schema.AnyNoContext, unknown>

/** Any tool still needing `R`. */
export type AnyWith<R> = Tool<string, Schema.Schema.AnyNoContext, unknown, R>

type InputOf<Input extends Schema.Schema.AnyNoContext> = Schema.Schema.Type<Input>

/** What `Tool.make` takes: the required members, and any optional member to override its default. */
export interface Options<Name extends string, Input extends Schema.Schema.AnyNoContext, Output, R> {
  readonly name: Name
  readonly description: string
  readonly prompt?: string
  readonly input: Input
  readonly inputJsonSchema?: JsonSchema
  readonly output?: Schema.Schema.AnyNoContext
  readonly progress?: Schema.Schema.AnyNoContext
  readonly maxResultSizeChars?: number
  readonly aliases?: ReadonlyArray<string>
  readonly searchHint?: string
  readonly shouldDefer?: boolean
  readonly alwaysLoad?: boolean
  readonly interruptBehavior?: InterruptBehavior
  readonly cascadeOnError?: boolean
  readonly timeoutMs?: number
  readonly source?: Source
  readonly mcpInfo?: McpInfo
  readonly call: (input: InputOf<Input>, context: ToolUseContext) => Effect.Effect<Output, unknown, R>
  readonly mapToolResult?: (output: Output, toolUseId: string) => ToolResultContent
  readonly isEnabled?: () => boolean
  readonly isConcurrencySafe?: (input: InputOf<Input>) => boolean
  readonly isReadOnly?: (input: InputOf<Input>) => boolean
  readonly isDestructive?: (input: InputOf<Input>) => boolean
  readonly checkPermissions?: (
    input: InputOf<Input>,
    context: ToolUseContext
  ) => Effect.Effect<PermissionResult, never, R>
  readonly validateInput?: (input: InputOf<Input>, context: ToolUseContext) => Effect.Effect<void, ToolError, R>
  readonly userFacingName?: (input: InputOf<Input> | undefined) => string
  readonly toClassifierInput?: (input: InputOf<Input>) => string
  readonly toHookResponse?: (output: Output, content: ToolResultContent) => unknown
  readonly getPath?: (input: InputOf<Input>, context: ToolUseContext) => string | undefined
  readonly ruleSubjects?: (input: InputOf<Input>, context: ToolUseContext) => RuleSubjects
}

/** The default rendering of an output: strings as they are, anything else as JSON. */
export const defaultMapToolResult = (output: unknown): ToolResultContent => {
  if (typeof output === "string") return output
  if (output === undefined || output === null) return ""
  return JSON.stringify(output)
}

/**
 * Whether a value survives JSON as it is: strings, finite numbers, booleans, null, arrays of them and plain
 * objects of them (`undefined` members, which JSON drops, included). Buffers, dates, class instances and
 * anything nested deeper than 64 levels do not.
 */
export const isPlainJson = (value: unknown, depth = 0): boolean => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true
  if (typeof value === "number") return Number.isFinite(value)
  if (typeof value !== "object" || depth > 64) return false
  if (Array.isArray(value)) return value.every((item) => isPlainJson(item, depth + 1))
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return false
  return Object.values(value).every((member) => member === undefined || isPlainJson(member, depth + 1))
}

/** The default `tool_response` of PostToolUse hooks: the output when it is plain JSON data, else the content. */
export const defaultHookResponse = (output: unknown, content: ToolResultContent): unknown =>
  output !== undefined && isPlainJson(output) ? output : content

const never = () => false

const Proto = {
  [TypeId]: TypeId,
  pipe() {
    return Pipeable.pipeArguments(this, arguments)
  }
}

// The defaults need no services: `provide` leaves them unwrapped, sparing a context merge per call.
const defaultCheckPermissions = () => Effect.succeed(passthrough)
const defaultValidateInput = () => Effect.void

/**
 * Builds a tool. Every optional member gets its fail-closed default here and nowhere else. `R` is what
 * the handlers need besides `ToolProgress`, which the runtime provides to every call.
 */
export function make<const Name extends string, Input extends Schema.Schema.AnyNoContext, Output, R = never>(
  options: Options<Name, Input, Output, R>
): Tool<Name, Input, Output, Exclude<R, ToolProgress>>
export function make(options: Options<string, Schema.Schema.AnyNoContext, unknown, unknown>): AnyWith<unknown> {
  const tool: Omit<AnyWith<unknown>, TypeId | "pipe"> = {
    name: options.name,
    description: options.description,
    prompt: options.prompt ?? options.description,
    inputSchema: options.input,
    inputJsonSchema: options.inputJsonSchema,
    outputSchema: options.output,
    progressSchema: options.progress,
    maxResultSizeChars: options.maxResultSizeChars ?? 50_000,
    aliases: options.aliases ?? [],
    searchHint: options.searchHint,
    shouldDefer: options.shouldDefer ?? false,
    alwaysLoad: options.alwaysLoad ?? false,
    interruptBehavior: options.interruptBehavior ?? "cancel",
    cascadeOnError: options.cascadeOnError ?? false,
    timeoutMs: options.timeoutMs,
    source: options.source ?? "plugin",
    mcpInfo: options.mcpInfo,
    call: options.call,
    mapToolResult: options.mapToolResult ?? defaultMapToolResult,
    isEnabled: options.isEnabled ?? (() => true),
    isConcurrencySafe: options.isConcurrencySafe ?? never,
    isReadOnly: options.isReadOnly ?? never,
    isDestructive: options.isDestructive ?? never,
    checkPermissions: options.checkPermissions ?? defaultCheckPermissions,
    validateInput: options.validateInput ?? defaultValidateInput,
    userFacingName: options.userFacingName ?? (() => options.name),
    toClassifierInput: options.toClassifierInput ?? (() => ""),
    toHookResponse: options.toHookResponse ?? defaultHookResponse,
    getPath: options.getPath ?? (() => undefined),
    ruleSubjects: options.ruleSubjects ?? ((input, context) => {
      const path = tool.getPath(input, context)
      return {
        specifiers: [],
        paths: path === undefined ? [] : [{ path, access: tool.isReadOnly(input) ? "read" : "write" }]
      }
    })
  }
  return Object.assign(Object.create(Proto), tool)
}

export const isTool = (u: unknown): u is Any => typeof u === "object" && u !== null && TypeId in u

/**
 * Satisfies a tool's requirements from a context, so it can sit in a registry beside any other tool.
 * The plugin loader does this with the context its layer built.
 */
export const provide = <Name extends string, Input extends Schema.Schema.AnyNoContext, Output, R>(
  tool: Tool<Name, Input, Output, R>,
  context: Context.Context<R>
): Tool<Name, Input, Output, never> => {
  const call = (input: InputOf<Input>, ctx: ToolUseContext) => Effect.provide(tool.call(input, ctx), context)
  providedCalls.set(call, (input: InputOf<Input>, ctx: ToolUseContext, progress: ToolProgressService) =>
    Effect.mapInputContext(
      tool.call(input, ctx),
      (parent: Context.Context<never>) => Context.merge(Context.add(parent, ToolProgress, progress), context)
    ))
  return Object.assign(Object.create(Proto), tool, {
    call,
    checkPermissions: tool.checkPermissions === defaultCheckPermissions
      ? tool.checkPermissions
      : (input: InputOf<Input>, ctx: ToolUseContext) => Effect.provide(tool.checkPermissions(input, ctx), context),
    validateInput: tool.validateInput === defaultValidateInput
      ? tool.validateInput
      : (input: InputOf<Input>, ctx: ToolUseContext) => Effect.provide(tool.validateInput(input, ctx), context)
  })
}

/** The JSON Schema of a tool's input as sent to a model: derived from the Schema unless overridden. */
export const inputJsonSchema = (tool: Any): JsonSchema => {
  if (tool.inputJsonSchema !== undefined) return tool.inputJsonSchema
  const { $schema: _, ...schema } = JSONSchema.make(tool.inputSchema)
  return schema
}

/** The tool definition for a model request: name, description (the prompt) and input schema. */
export const definition = (tool: Any): { name: string; description: string; input_schema: JsonSchema } => ({
  name: tool.name,
  description: tool.prompt,
  input_schema: inputJsonSchema(tool)
})
