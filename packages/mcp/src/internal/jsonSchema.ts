/**
 * Validates an MCP tool's arguments against the JSON Schema its server declared (Ajv: the validator the
 * MCP SDK itself uses), and words the problems the way toolwright's own validation does, so a model
 * reads the same kind of message for every tool.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv"
import { Ajv2020 } from "ajv/dist/2020.js"

const draft07 = new Ajv({ allErrors: true, strict: false, validateFormats: false })
const draft2020 = new Ajv2020({ allErrors: true, strict: false, validateFormats: false })

export type Validator = (input: unknown) => ReadonlyArray<string>

const renderPath = (instancePath: string, extra?: string): string => {
  const parts = instancePath.split("/").slice(1).map((part) => part.replace(/~1/g, "/").replace(/~0/g, "~"))
  if (extra !== undefined) parts.push(extra)
  let out = ""
  for (const part of parts) {
    if (/^\d+$/.test(part)) out += `[${part}]`
    else out += out === "" ? part : `.${part}`
  }
  return out
}

const jsonType = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const valueAt = (input: unknown, instancePath: string): unknown => {
  let current = input
  for (const part of instancePath.split("/").slice(1)) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~")
    if (!isRecord(current)) return undefined
    current = current[key]
  }
  return current
}

const describe = (error: ErrorObject, input: unknown): string => {
  const params: Record<string, unknown> = error.params
  switch (error.keyword) {
    case "required":
      return `The required parameter \`${renderPath(error.instancePath, String(params.missingProperty))}\` is missing`
    case "additionalProperties":
      return `An unexpected parameter \`${
        renderPath(error.instancePath, String(params.additionalProperty))
      }\` was provided`
    case "type": {
      const where = renderPath(error.instancePath)
      const expected = Array.isArray(params.type) ? params.type.join(" | ") : String(params.type)
      const provided = jsonType(valueAt(input, error.instancePath))
      return where === ""
        ? `The input is expected as \`${expected}\` but provided as \`${provided}\``
        : `The parameter \`${where}\` type is expected as \`${expected}\` but provided as \`${provided}\``
    }
    case "enum":
      return `The parameter \`${renderPath(error.instancePath)}\` is invalid: must be one of ${
        Array.isArray(params.allowedValues) ? params.allowedValues.map((v) => JSON.stringify(v)).join(", ") : "the allowed values"
      }`
    default: {
      const where = renderPath(error.instancePath)
      return where === ""
        ? `The input is invalid: ${error.message ?? error.keyword}`
        : `The parameter \`${where}\` is invalid: ${error.message ?? error.keyword}`
    }
  }
}

/**
 * A validator for a server's input schema. A schema Ajv cannot compile is not a reason to refuse every
 * call: the server validates its own input, so such a tool is validated by the server alone.
 */
export const compile = (schema: { readonly [key: string]: unknown }): Validator => {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : ""
  let validate: ValidateFunction
  try {
    const { $schema: _, ...rest } = schema
    validate = dialect.includes("2020-12") ? draft2020.compile(rest) : draft07.compile(rest)
  } catch {
    return () => []
  }
  return (input) => {
    if (validate(input)) return []
    const seen = new Set<string>()
    const lines: Array<string> = []
    for (const error of validate.errors ?? []) {
      const line = describe(error, input)
      if (!seen.has(line)) {
        seen.add(line)
        lines.push(line)
      }
    }
    const rank = (line: string) => (line.startsWith("The required") ? 0 : line.startsWith("An unexpected") ? 2 : 1)
    return lines.map((line, index) => ({ line, index })).sort((a, b) => rank(a.line) - rank(b.line) || a.index - b.index)
      .map(({ line }) => line)
  }
}
