/**
 * Claude Code's permission rule syntax, parsed and matched exactly: `Tool`, `Tool(specifier)`; Bash-style
 * wildcards (`*` anywhere, `ls *` at a word boundary, legacy `:*`); Read/Edit gitignore-style paths with
 * `//abs`, `~/home`, `/relative-to-settings`, `./relative-to-cwd`; `WebFetch(domain:host)`; `mcp__server`,
 * `mcp__server__*`, `mcp__server__tool`. A rule is compiled once; matching a call is string work only.
 */
import { Either } from "effect"
import * as PosixPath from "./internal/posixPath.js"

/** A parsed rule: the tool it names and its specifier, `undefined` when it covers every use of the tool. */
export interface Rule {
  readonly raw: string
  readonly toolName: string
  readonly content: string | undefined
}

const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/
const MCP_NAME = /^mcp__[A-Za-z0-9_-]+?(?:__(?:[A-Za-z0-9_-]+|\*))?$/

/** Where an unescaped `(` or `)` sits in a rule, skipping `\(` and `\)`. */
const unescapedIndex = (text: string, char: string, from: number, last: boolean): number => {
  let found = -1
  for (let i = from; i < text.length; i++) {
    if (text[i] === "\\") {
      i++
      continue
    }
    if (text[i] === char) {
      if (!last) return i
      found = i
    }
  }
  return found
}

/**
 * Parses a rule as written in settings. The error says what is wrong with it and what is expected, for
 * a message that also names the file and the field.
 */
export const parse = (raw: string): Either.Either<Rule, string> => {
  const text = raw.trim()
  if (text === "") return Either.left("a rule cannot be empty; expected Tool or Tool(specifier), e.g. Bash(npm test)")
  const open = unescapedIndex(text, "(", 0, false)
  if (open === -1) {
    if (unescapedIndex(text, ")", 0, false) !== -1) return Either.left(`"${raw}" has a ")" without "("`)
    if (text.startsWith("mcp__")) {
      return MCP_NAME.test(text)
        ? Either.right({ raw, toolName: text, content: undefined })
        : Either.left(`"${raw}" is not a valid MCP rule; expected mcp__server, mcp__server__* or mcp__server__tool`)
    }
    return TOOL_NAME.test(text)
      ? Either.right({ raw, toolName: text, content: undefined })
      : Either.left(`"${raw}" is not a tool name; expected Tool or Tool(specifier), e.g. Read or Bash(npm test)`)
  }
  const toolName = text.slice(0, open)
  const close = unescapedIndex(text, ")", open + 1, true)
  if (close === -1) return Either.left(`"${raw}" is missing its closing ")"; expected Tool(specifier)`)
  if (close !== text.length - 1) return Either.left(`"${raw}" has text after its closing ")"`)
  if (!TOOL_NAME.test(toolName)) {
    return Either.left(`"${raw}" does not start with a tool name; expected Tool(specifier), e.g. Bash(npm test)`)
  }
  if (toolName.startsWith("mcp__")) {
    return Either.left(
      `"${raw}": MCP rules take no specifier; expected mcp__server, mcp__server__* or mcp__server__tool`
    )
  }
  const content = text.slice(open + 1, close).replace(/\\([()])/g, "$1")
  // `Tool()` and `Tool(*)` mean every use of the tool, as in Claude Code.
  if (content === "" || content === "*") return Either.right({ raw, toolName, content: undefined })
  if (toolName === "WebFetch" && !/^domain:[^\s/]+$/.test(content)) {
    return Either.left(
      `"${raw}": WebFetch rules take domain:HOST, e.g. WebFetch(domain:example.com) or WebFetch(domain:*.example.com)`
    )
  }
  return Either.right({ raw, toolName, content })
}

const FILE_TOOLS = new Set(["Read", "Edit", "Write", "NotebookEdit", "Glob", "Grep"])

/** Claude Code's tool names, to recognise one written in the wrong case. */
const KNOWN_TOOLS = [
  ...FILE_TOOLS,
  "Bash",
  "WebFetch",
  "WebSearch",
  "Agent",
  "Task",
  "TodoWrite",
  "MultiEdit",
  "ToolSearch",
  "TaskOutput",
  "TaskStop",
  "Skill",
  "SlashCommand",
  "ExitPlanMode"
]

/**
 * What Claude Code's settings validation rejects in a rule that parses, because it would never match what
 * its author meant: a tool name in lower case (`bash(curl:*)` names no tool; a plugin's own lower-case
 * names are left alone), a Bash `:*` that is not at the end (`git reset:* --hard`), `:*` in a path rule.
 */
export const check = (rule: Rule): string | undefined => {
  const { content, raw, toolName } = rule
  const meant = KNOWN_TOOLS.find((name) => name !== toolName && name.toLowerCase() === toolName.toLowerCase())
  if (meant !== undefined) {
    return `"${raw}": tool names are case-sensitive, and this one names no tool; did you mean ` +
      `"${format(meant, content)}"?`
  }
  if (content === undefined) return undefined
  if (toolName === "Bash" && /:\*(?!$)/.test(content)) {
    return `"${raw}": ":*" must be at the end, for a prefix (e.g. Bash(git reset:*)); ` +
      `use * for a wildcard in the middle (e.g. Bash(git reset * --hard))`
  }
  if (FILE_TOOLS.has(toolName) && content.includes(":*")) {
    return `"${raw}": ":*" is only for Bash prefix rules; use a glob for paths, e.g. ${toolName}(./src/**)`
  }
  return undefined
}

/** Writes a rule back: `Tool` or `Tool(content)` with parentheses in the content escaped. */
export const format = (toolName: string, content?: string): string =>
  content === undefined ? toolName : `${toolName}(${content.replace(/[()]/g, "\\$&")})`

// ---------------------------------------------------------------------------------------------------------
// Specifiers: Bash commands, Agent names, any Tool(specifier) that is not a path or a domain.

/** A compiled specifier pattern. `prefix` is the literal text every match starts with (a cheap pre-check). */
export interface SpecifierPattern {
  readonly prefix: string
  readonly test: (subject: string) => boolean
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/**
 * Compiles Claude Code's wildcard syntax: `*` matches any text (spaces included), `\*` is a literal star;
 * a trailing ` *` when it is the only wildcard also matches the bare command (`ls *` matches `ls` and
 * `ls -la` but not `lsof`); a trailing `:*` is the legacy spelling of ` *`. No wildcard: exact match.
 */
export const compileSpecifier = (content: string): SpecifierPattern => {
  const source = /(^|[^\\]):\*$/.test(content) ? `${content.slice(0, -2)} *` : content
  const parts: Array<{ readonly literal: string } | "*"> = []
  let literal = ""
  for (let i = 0; i < source.length; i++) {
    const char = source[i]
    if (char === "\\" && (source[i + 1] === "*" || source[i + 1] === "\\")) {
      literal += source[i + 1]
      i++
    } else if (char === "*") {
      parts.push({ literal }, "*")
      literal = ""
    } else {
      literal += char
    }
  }
  parts.push({ literal })
  const wildcards = parts.filter((part) => part === "*").length
  const first = parts[0]
  const prefix = typeof first === "string" ? "" : first.literal
  if (wildcards === 0) return { prefix, test: (subject) => subject === prefix }
  const last = parts[parts.length - 1]
  const beforeLast = parts[parts.length - 3]
  let pattern: string
  if (
    wildcards === 1 && typeof last !== "string" && last.literal === "" && typeof beforeLast !== "string" &&
    beforeLast.literal.endsWith(" ")
  ) {
    pattern = `${escapeRegExp(beforeLast.literal.slice(0, -1))}(?: .*)?`
  } else {
    pattern = parts.map((part) => (part === "*" ? ".*" : escapeRegExp(part.literal))).join("")
  }
  const regex = new RegExp(`^${pattern}$`, "s")
  return { prefix: prefix.endsWith(" ") && wildcards === 1 ? prefix.slice(0, -1) : prefix, test: (s) => regex.test(s) }
}

/**
 * Whether a specifier holds shell syntax an allow rule must never vouch for: command separators (`;`, `&`,
 * `|`, newlines), substitution (`$(`, backticks, `<(`, `>(`), redirections, ANSI-C quoting. Quotes are
 * followed: `echo 'a;b'` is plain text, `echo "$(id)"` is not. An unterminated quote is unsafe.
 */
export const isUnsafeSpecifier = (specifier: string): boolean => {
  let quote: "'" | "\"" | undefined
  for (let i = 0; i < specifier.length; i++) {
    const char = specifier[i]
    if (char === "\n" || char === "\r" || char === "\0") return true
    if (quote === "'") {
      if (char === "'") quote = undefined
      continue
    }
    if (char === "\\") {
      i++
      continue
    }
    if (char === "`") return true
    if (char === "$" && (specifier[i + 1] === "(" || specifier[i + 1] === "'" || specifier[i + 1] === "\"")) return true
    if (quote === "\"") {
      if (char === "\"") quote = undefined
      continue
    }
    if (char === "'" || char === "\"") quote = char
    else if (";&|<>()".includes(char)) return true
  }
  return quote !== undefined
}

const WRAPPERS = new Set([
  "timeout",
  "nice",
  "nohup",
  "time",
  "env",
  "command",
  "exec",
  "xargs",
  "stdbuf",
  "sudo",
  "builtin"
])

/** Drops leading `VAR=value` assignments and wrapper commands (with their options) from a command. */
const stripPrefixes = (command: string): string => {
  const words = command.trim().split(/\s+/)
  let i = 0
  while (i < words.length) {
    const word = words[i]
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
      i++
    } else if (WRAPPERS.has(word)) {
      i++
      // Options and numeric arguments of the wrapper (`timeout 5`, `nice -n 10`, `xargs -0`).
      while (i < words.length && (/^-/.test(words[i]) || /^\d+(\.\d+)?[smhd]?$/.test(words[i]))) i++
    } else {
      break
    }
  }
  return words.slice(i).join(" ")
}

/**
 * The readings of a specifier a deny or ask rule is checked against, beyond the specifier itself: each
 * piece between shell separators and substitutions, without quotes, and without env-var prefixes and
 * wrapper commands. Over-matching a deny rule is safe; missing one is a bypass.
 */
export const denyVariants = (specifier: string): ReadonlyArray<string> => {
  if (!/[;&|\n\r\t`()<>{}$"'\\=]/.test(specifier) && !WRAPPERS.has(specifier.slice(0, specifier.indexOf(" ") >>> 0))) {
    return [specifier]
  }
  const variants = new Set<string>([specifier])
  const pieces = specifier.split(/\$\(|[;&|\n\r`()<>{}]+/)
  for (const piece of pieces) {
    const trimmed = piece.trim()
    if (trimmed === "") continue
    const unquoted = trimmed.replace(/\\(.)/g, "$1").replace(/["']/g, "")
    for (const form of [trimmed, unquoted]) {
      variants.add(form)
      variants.add(stripPrefixes(form))
    }
  }
  variants.delete("")
  return Array.from(variants)
}

// ---------------------------------------------------------------------------------------------------------
// Domains

/** `WebFetch(domain:…)`: case-insensitive; `*.x.com` matches subdomains of x.com (not x.com); `*` any host. */
export const matchesDomain = (pattern: string, host: string): boolean => {
  const p = pattern.toLowerCase().replace(/\.$/, "")
  const h = host.toLowerCase().replace(/\.$/, "")
  if (p === "*") return true
  if (p.startsWith("*.")) return h.endsWith(p.slice(1)) && h.length > p.length - 1
  return h === p
}

// ---------------------------------------------------------------------------------------------------------
// Paths (gitignore semantics)

/** The directories path rules are anchored to. */
export interface PathRoots {
  readonly cwd: string
  /** The user's home, for `~/` rules; when unknown, `~/x` rules match `x` at any depth (deny-safe). */
  readonly home?: string | undefined
  /** The directory a settings file governs, for `/x` rules; the cwd when absent. */
  readonly settingsRoot?: string | undefined
}

/** A compiled path pattern: the root it is relative to (`undefined`: any depth anywhere) and its regex. */
export interface PathPattern {
  readonly root: string | undefined
  readonly regex: RegExp
  /** Literal text every matching relative path starts with (a cheap pre-check); "" when unknown. */
  readonly prefix: string
}

const globSegment = (segment: string): string => {
  let out = ""
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i]
    if (char === "\\" && i + 1 < segment.length) {
      out += escapeRegExp(segment[i + 1])
      i++
    } else if (char === "*") {
      out += "[^/]*"
    } else if (char === "?") {
      out += "[^/]"
    } else if (char === "[") {
      const end = segment.indexOf("]", i + 2)
      if (end === -1) {
        out += "\\["
        continue
      }
      let body = segment.slice(i + 1, end)
      const negated = body.startsWith("!") || body.startsWith("^")
      if (negated) body = body.slice(1)
      out += `[${negated ? "^/" : ""}${body.replace(/\\/g, "\\\\").replace(/\]/g, "\\]")}]`
      i = end
    } else {
      out += escapeRegExp(char)
    }
  }
  return out
}

/**
 * A gitignore pattern as a regex over a path relative to its root: `*` stays within a directory, `**`
 * crosses them, a pattern without an inner `/` matches at any depth unless `anchored`.
 */
export const globToRegExp = (pattern: string, anchored: boolean): RegExp => {
  const trimmed = pattern.replace(/\/+$/, "")
  const body = trimmed === "" ? "**" : trimmed
  const isAnchored = anchored || body.includes("/")
  const segments = body.split("/").filter((segment) => segment !== "")
  let source = ""
  segments.forEach((segment, index) => {
    const lastSegment = index === segments.length - 1
    if (segment === "**") source += lastSegment ? ".*" : "(?:.*/)?"
    else source += globSegment(segment) + (lastSegment ? "" : "/")
  })
  return new RegExp(`^${isAnchored ? "" : "(?:.*/)?"}${source}$`, "s")
}

/** The literal start of an anchored pattern, up to its first glob character, cut back to a whole segment. */
const literalPrefix = (pattern: string, anchored: boolean): string => {
  if (!anchored && !pattern.replace(/\/+$/, "").includes("/")) return ""
  const glob = pattern.search(/[*?[\\]/)
  const literal = glob === -1 ? pattern.replace(/\/+$/, "") : pattern.slice(0, glob)
  // Every match of an anchored pattern, and every directory above one, begins with this literal text.
  return literal.replace(/^\/+/, "")
}

const pathPattern = (root: string | undefined, pattern: string, anchored: boolean): PathPattern => {
  // `../x` climbs from the root before matching: rules may name a sibling of the project.
  let base = root
  let rest = pattern
  while (base !== undefined && (rest.startsWith("../") || rest === "..")) {
    base = PosixPath.dirname(base)
    rest = rest.slice(3)
  }
  return {
    root: base,
    regex: globToRegExp(rest, anchored),
    prefix: base === undefined ? "" : literalPrefix(rest, anchored)
  }
}

/** Compiles a Read/Edit specifier against the roots its forms refer to. */
export const compilePath = (content: string, roots: PathRoots): PathPattern => {
  if (content.startsWith("//")) return pathPattern("/", content.slice(2), true)
  if (content === "~" || content.startsWith("~/")) {
    const rest = content.slice(2)
    return roots.home === undefined
      ? pathPattern(undefined, `**/${rest === "" ? "**" : rest}`, true)
      : pathPattern(PosixPath.normalize(roots.home), rest, true)
  }
  if (content.startsWith("/")) {
    return pathPattern(PosixPath.normalize(roots.settingsRoot ?? roots.cwd), content.slice(1), true)
  }
  if (content === "." || content.startsWith("./")) {
    return pathPattern(PosixPath.normalize(roots.cwd), content.slice(2), true)
  }
  return pathPattern(PosixPath.normalize(roots.cwd), content, false)
}

/**
 * Whether an absolute, normalised path is matched: the path itself or any directory above it below the
 * root (gitignore: what is inside a matched directory is matched). `rootForms` are the root's other
 * spellings (its real path), so a path written through a symlinked root still matches.
 */
export const matchesPath = (
  pattern: PathPattern,
  path: string,
  rootForms: ReadonlyArray<string> = pattern.root === undefined ? [] : [pattern.root]
): boolean => {
  const candidates = pattern.root === undefined ? ["/"] : rootForms
  for (const root of candidates) {
    const relative = PosixPath.relativeInside(root, path)
    if (relative === undefined || relative === "" || !relative.startsWith(pattern.prefix)) continue
    if (pattern.regex.test(relative)) return true
    let slash = relative.indexOf("/")
    while (slash !== -1) {
      if (pattern.regex.test(relative.slice(0, slash))) return true
      slash = relative.indexOf("/", slash + 1)
    }
  }
  return false
}

// ---------------------------------------------------------------------------------------------------------
// Tool names

/**
 * Whether a rule's tool name covers a tool: its name or an alias; for MCP, `mcp__server` and
 * `mcp__server__*` cover every tool of the server.
 */
export const namesTool = (
  ruleTool: string,
  tool: { readonly name: string; readonly aliases: ReadonlyArray<string> }
): boolean => {
  if (ruleTool === tool.name || tool.aliases.includes(ruleTool)) return true
  if (!ruleTool.startsWith("mcp__") || !tool.name.startsWith("mcp__")) return false
  const server = ruleTool.endsWith("__*") ? ruleTool.slice(0, -3) : ruleTool
  if (server.slice(5).includes("__")) return false
  return tool.name.startsWith(`${server}__`)
}
