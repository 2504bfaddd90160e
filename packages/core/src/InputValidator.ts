/**
 * The validation stage: decode a call's input with the tool's Schema (every error, excess keys
 * rejected), then run the tool's own `validateInput`. Failures read the way Claude Code words them.
 */
import { Cause, Context, Effect, Either, Layer, Option, ParseResult, Predicate, Schema, SchemaAST } from "effect"
import { constant } from "effect/Function"
import { succeeded } from "./internal/succeeded.js"
import type * as Tool from "./Tool.js"
import { InputValidationError, ToolError } from "./ToolErrors.js"
import type { ToolUseContext } from "./ToolUseContext.js"

export interface Service {
  /** The decoded input, or why it was refused (a schema problem or the tool's own check). */
  readonly validate: (
    tool: Tool.Any,
    input: unknown,
    context: ToolUseContext
  ) => Effect.Effect<unknown, InputValidationError | ToolError>
}

export class InputValidator extends Context.Tag("@toolwright/core/InputValidator")<InputValidator, Service>() {}

const renderPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else out += out === "" ? String(key) : `.${String(key)}`
  }
  return out
}

/** The type name a model understands for an AST: `string`, `number`, `"a" | "b"`, `array`, `object`. */
export const expectedType = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return "string"
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "boolean"
    case "BigIntKeyword":
      return "bigint"
    case "Literal":
      return ast.literal === null ? "null" : JSON.stringify(ast.literal)
    case "Enums":
      return ast.enums.map(([, value]) => JSON.stringify(value)).join(" | ")
    case "Union": {
      // An optional parameter's `| undefined` is not something a model can send in JSON.
      const names = [...new Set(ast.types.map(expectedType))].filter((name) => name !== "undefined")
      return names.join(" | ")
    }
    case "TupleType":
      return "array"
    case "TypeLiteral":
      return "object"
    case "Refinement":
      return expectedType(ast.from)
    case "Transformation":
      return expectedType(ast.from)
    case "Suspend":
      return expectedType(ast.f())
    case "UndefinedKeyword":
    case "VoidKeyword":
      return "undefined"
    default:
      return "value"
  }
}

/** The JSON type of a value the model sent. */
export const providedType = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  return typeof value
}

/** One line per problem, with the parameter's path, in the order the Schema found them. */
export const describeIssues = (issue: ParseResult.ParseIssue): ReadonlyArray<string> => {
  const lines: Array<string> = []
  const visit = (current: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): void => {
    switch (current._tag) {
      case "Pointer":
        return visit(current.issue, [...path, ...(Array.isArray(current.path) ? current.path : [current.path])])
      case "Composite": {
        const issues = Array.isArray(current.issues) ? current.issues : [current.issues]
        // A union reports one failure per member: say what was expected of the whole value instead.
        if (SchemaAST.isUnion(current.ast) && current.ast.types.length > 1 && current.actual !== undefined) {
          // ...unless the value had the right shape for exactly one member and failed inside it.
          const deeper = issues.filter((child) => child._tag !== "Type")
          if (deeper.length === 1) return visit(deeper[0], path)
          lines.push(typeLine(path, expectedType(current.ast), current.actual))
          return
        }
        for (const child of issues) visit(child, path)
        return
      }
      case "Missing":
        lines.push(
          path.length === 0 ? "A required value is missing" : `The required parameter \`${renderPath(path)}\` is missing`
        )
        return
      case "Unexpected":
        lines.push(`An unexpected parameter \`${renderPath(path)}\` was provided`)
        return
      case "Type": {
        if (SchemaAST.isTypeLiteral(current.ast) || SchemaAST.isTupleType(current.ast)) {
          lines.push(typeLine(path, expectedType(current.ast), current.actual))
          return
        }
        if (SchemaAST.isRefinement(current.ast)) {
          lines.push(`The parameter \`${renderPath(path)}\` is invalid: ${describeRefinement(current.ast, current.actual)}`)
          return
        }
        const custom = current.message
        if (custom !== undefined) {
          lines.push(`The parameter \`${renderPath(path)}\` is invalid: ${custom}`)
          return
        }
        lines.push(typeLine(path, expectedType(current.ast), current.actual))
        return
      }
      case "Refinement":
        if (current.kind === "From") return visit(current.issue, path)
        lines.push(`The parameter \`${renderPath(path)}\` is invalid: ${refinementMessage(current)}`)
        return
      case "Transformation":
        return visit(current.issue, path)
      case "Forbidden":
        lines.push(`The parameter \`${renderPath(path)}\` could not be checked: ${current.message ?? "forbidden"}`)
        return
    }
  }
  visit(issue, [])
  // Missing parameters first, unexpected ones last: the order a reader fixes them in.
  const rank = (line: string) => (line.startsWith("The required") ? 0 : line.startsWith("An unexpected") ? 2 : 1)
  return lines.map((line, index) => ({ line, index })).sort((a, b) => rank(a.line) - rank(b.line) || a.index - b.index)
    .map(({ line }) => line)
}

const typeLine = (path: ReadonlyArray<PropertyKey>, expected: string, actual: unknown): string =>
  path.length === 0
    ? `The input is expected as \`${expected}\` but provided as \`${providedType(actual)}\``
    : `The parameter \`${renderPath(path)}\` type is expected as \`${expected}\` but provided as \`${
      providedType(actual)
    }\``

const describeRefinement = (ast: SchemaAST.Refinement, actual: unknown): string => {
  const described = SchemaAST.getDescriptionAnnotation(ast).pipe(
    Option.orElse(() => SchemaAST.getIdentifierAnnotation(ast)),
    Option.getOrElse(() => "a value that satisfies the schema")
  )
  return `expected ${described}, got ${JSON.stringify(actual)}`
}

const refinementMessage = (issue: ParseResult.Refinement): string => {
  const inner = issue.issue
  if (inner._tag === "Type" && inner.message !== undefined) return inner.message
  return describeRefinement(issue.ast, issue.actual)
}

/** The message models already know: `InputValidationError: Read failed due to the following issues:`. */
export const formatValidationMessage = (toolName: string, issues: ReadonlyArray<string>): string =>
  `InputValidationError: ${toolName} failed due to the following ${issues.length > 1 ? "issues" : "issue"}:\n${
    issues.join("\n")
  }`

type Decoder = (u: unknown) => Either.Either<unknown, ParseResult.ParseIssue>
// One compiled decoder per schema: building it costs more than running it.
const decoders = new WeakMap<Schema.Schema.AnyNoContext, Decoder>()

const decoderFor = (schema: Schema.Schema.AnyNoContext) => {
  let decoder = decoders.get(schema)
  if (decoder === undefined) {
    decoder = ParseResult.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })
    decoders.set(schema, decoder)
  }
  return decoder
}

/** The scalar kinds a property's type admits besides a string: what a string sent for it may stand for. */
const scalarKinds = (ast: SchemaAST.AST): { number: boolean; boolean: boolean; string: boolean } => {
  switch (ast._tag) {
    case "NumberKeyword":
      return { number: true, boolean: false, string: false }
    case "BooleanKeyword":
      return { number: false, boolean: true, string: false }
    case "StringKeyword":
    case "TemplateLiteral":
      return { number: false, boolean: false, string: true }
    case "Refinement":
      return scalarKinds(ast.from)
    case "Transformation":
      return scalarKinds(ast.from)
    case "Union": {
      const kinds = { number: false, boolean: false, string: false }
      for (const member of ast.types) {
        const inner = scalarKinds(member)
        kinds.number ||= inner.number
        kinds.boolean ||= inner.boolean
        kinds.string ||= inner.string
      }
      return kinds
    }
    default:
      return { number: false, boolean: false, string: false }
  }
}

const NUMBER_TEXT = /^-?\d+(\.\d+)?$/

/**
 * Claude Code's semantic coercion: models now and then send `"3"` for 3 and `"true"` for true. A top-level
 * property typed as a number (or boolean), and not also as a string, takes the value its string spells
 * exactly; anything else is left for the decoder to refuse. `undefined` when nothing changed.
 */
export const coerceScalars = (ast: SchemaAST.AST, input: unknown): Record<PropertyKey, unknown> | undefined => {
  if (ast._tag === "Transformation" || ast._tag === "Refinement") return coerceScalars(ast.from, input)
  if (ast._tag !== "TypeLiteral" || !Predicate.isRecord(input)) return undefined
  let coerced: Record<PropertyKey, unknown> | undefined
  for (const property of ast.propertySignatures) {
    const value = input[property.name]
    if (typeof value !== "string") continue
    const kinds = scalarKinds(property.type)
    if (kinds.string) continue
    // JSON has no Infinity: digits past a double's range are no number a model could have meant.
    const next = kinds.number && NUMBER_TEXT.test(value) && Number.isFinite(Number(value))
      ? Number(value)
      : kinds.boolean && (value === "true" || value === "false")
      ? value === "true"
      : undefined
    if (next === undefined) continue
    coerced ??= { ...input }
    coerced[property.name] = next
  }
  return coerced
}

/** Decodes `input` against the tool's Schema, reporting every problem at once. */
export const decodeInput = (tool: Tool.Any, input: unknown): Effect.Effect<unknown, InputValidationError> => {
  const decode = decoderFor(tool.inputSchema)
  const result = decode(input)
  if (result._tag === "Right") return Effect.succeed(result.right)
  // Only on the way to an error: a valid input pays nothing for it.
  let failure = result.left
  const coerced = coerceScalars(tool.inputSchema.ast, input)
  if (coerced !== undefined) {
    const again = decode(coerced)
    if (again._tag === "Right") return Effect.succeed(again.right)
    // What is still wrong once the strings are read as Claude Code reads them.
    failure = again.left
  }
  const issues = describeIssues(failure)
  const lines = issues.length === 0 ? [ParseResult.TreeFormatter.formatIssueSync(failure)] : issues
  return Effect.fail(
    new InputValidationError({
      toolName: tool.name,
      issues: lines,
      message: formatValidationMessage(tool.name, lines)
    })
  )
}

/** A tool's check that died (or threw inside its Effect) did not check the input: that is the tool's failure. */
const checkFailed = (tool: Tool.Any) => (cause: Cause.Cause<ToolError>): Effect.Effect<never, ToolError> => {
  const defect = Cause.dieOption(cause)
  return defect._tag === "Some"
    ? Effect.fail(new ToolError({ message: `${tool.name} could not check its input: ${String(defect.value)}` }))
    : Effect.failCause(cause)
}

/**
 * Decodes, then runs the tool's `validateInput`. Both are called as the stage is, so a valid input to a tool
 * whose own check answers with a plain value (the default) comes back as `Effect.succeed`, which the pipeline
 * reads without a fiber step.
 */
export const make: Service = {
  validate: (tool, input, context) => {
    let decoded: Effect.Effect<unknown, InputValidationError>
    let check: Effect.Effect<void, ToolError>
    try {
      decoded = decodeInput(tool, input)
      if (!succeeded(decoded)) return decoded
      check = tool.validateInput(decoded.value, context)
    } catch (defect) {
      return Effect.die(defect)
    }
    // Handlers made by functions, not written in the options object: bundles name every arrow written as a
    // property (esbuild `keepNames`), which would cost each call.
    return succeeded(check)
      ? decoded
      : Effect.matchCauseEffect(check, { onFailure: checkFailed(tool), onSuccess: constant(decoded) })
  }
}

export const layer: Layer.Layer<InputValidator> = Layer.succeed(InputValidator, make)
