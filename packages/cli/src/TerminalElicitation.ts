/**
 * An MCP server's question (elicitation, form mode) put to the person at the terminal: the message, then
 * answer / decline / cancel, then one line per field. An empty line keeps the field's default (filled in
 * by the MCP client, SEP-1034) or leaves an optional field out. End of input, or a field answered wrongly
 * twice, cancels: the server is never left waiting on a question nobody can answer.
 */
import type { McpElicitation } from "@toolwright/mcp"
import { Effect, Predicate } from "effect"
import type { Terminal } from "./TerminalPrompter.js"

type Field = McpElicitation.Request["requestedSchema"]["properties"][string]
type Value = string | number | boolean | Array<string>

/** The values a choice field allows: `enum`, or the `const` of each `oneOf` / `items.anyOf` option. */
const choices = (field: Field): ReadonlyArray<string> | undefined => {
  if ("enum" in field) return field.enum
  if ("oneOf" in field) return field.oneOf.map((option) => option.const)
  if (field.type === "array") return "enum" in field.items ? field.items.enum : field.items.anyOf.map((o) => o.const)
  return undefined
}

const describeDefault = (value: unknown): string =>
  Array.isArray(value) ? value.join(", ") : typeof value === "boolean" ? (value ? "yes" : "no") : String(value)

/** The line asking for one field, e.g. `  count (integer, default 3): `. */
export const fieldPrompt = (name: string, field: Field, required: boolean): string => {
  const options = choices(field)
  const kind = field.type === "array"
    ? `any of ${options?.join(", ")}, comma-separated`
    : options !== undefined
    ? `one of ${options.join(", ")}`
    : field.type === "boolean"
    ? "yes/no"
    : field.type
  const fallback = field.default !== undefined
    ? `, default ${describeDefault(field.default)}`
    : required
    ? ", required"
    : ", optional"
  const about = field.description === undefined ? "" : ` — ${field.description}`
  return `  ${field.title ?? name}${about} (${kind}${fallback}): `
}

/** The typed line as the field's value, or why it is not one. */
export const parseField = (field: Field, text: string): Value | { readonly problem: string } => {
  const options = choices(field)
  if (field.type === "array") {
    const picked = text.split(",").map((part) => part.trim()).filter((part) => part !== "")
    const unknown = picked.filter((part) => !options?.includes(part))
    return unknown.length > 0 ? { problem: `not an option: ${unknown.join(", ")}` } : picked
  }
  if (options !== undefined) return options.includes(text) ? text : { problem: `answer one of ${options.join(", ")}` }
  if (field.type === "boolean") {
    if (/^(y|yes|true)$/i.test(text)) return true
    if (/^(n|no|false)$/i.test(text)) return false
    return { problem: "answer yes or no" }
  }
  if (field.type === "number" || field.type === "integer") {
    const value = Number(text)
    if (!Number.isFinite(value) || (field.type === "integer" && !Number.isInteger(value))) {
      return { problem: `answer ${field.type === "integer" ? "a whole number" : "a number"}` }
    }
    return value
  }
  return text
}

/** Asks the terminal's person; one question at a time with the terminal's other prompts. */
export const make = (terminal: Terminal): McpElicitation.Service => ({
  elicit: (request) =>
    terminal.exclusive(Effect.gen(function*() {
      let choice = yield* terminal.readAnswer(
        `[MCP server "${request.server}"] asks: ${request.message}\n` +
          "  1) answer   2) decline   3) cancel\nchoice [1/2/3]: "
      )
      for (let attempt = 0; attempt < 2 && choice !== undefined; attempt++) {
        const picked = choice.trim().toLowerCase()
        if (picked === "2" || picked === "n" || picked === "no") return { action: "decline" } as const
        if (picked === "3" || picked === "c") return { action: "cancel" } as const
        if (picked === "1" || picked === "y" || picked === "yes") break
        choice = attempt === 0
          ? yield* terminal.readAnswer("please answer 1 (answer), 2 (decline) or 3 (cancel): ")
          : undefined
      }
      if (choice === undefined) return { action: "cancel" } as const
      const required = new Set(request.requestedSchema.required ?? [])
      const content: Record<string, Value> = {}
      for (const [name, field] of Object.entries(request.requestedSchema.properties)) {
        let question = fieldPrompt(name, field, required.has(name))
        let value: Value | undefined
        for (let attempt = 0; attempt < 2 && value === undefined; attempt++) {
          const line = yield* terminal.readAnswer(question)
          if (line === undefined) return { action: "cancel" } as const
          const text = line.trim()
          if (text === "") {
            if (field.default !== undefined || !required.has(name)) break
            question = `  ${name} is required: `
            continue
          }
          const parsed = parseField(field, text)
          if (Predicate.hasProperty(parsed, "problem")) question = `  ${parsed.problem}: `
          else value = parsed
        }
        if (value !== undefined) content[name] = value
        else if (required.has(name) && field.default === undefined) return { action: "cancel" } as const
      }
      return { action: "accept", content } as const
    }))
})
