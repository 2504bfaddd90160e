/**
 * The names MCP tools get in toolwright: `mcp__<server>__<tool>`, normalised to what model APIs accept
 * (`[A-Za-z0-9_-]`, at most 64 characters), with collisions resolved the same way on every run.
 */
import { createHash } from "node:crypto"

export const MAX_LENGTH = 64

/** Every character a model API refuses in a tool name becomes `_`. */
export const normalize = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_")

const hash = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 8)

/** A name cut to 64 characters, ending with a hash of the full name so different long names stay apart. */
const fit = (name: string, full: string): string =>
  name.length <= MAX_LENGTH ? name : `${name.slice(0, MAX_LENGTH - 9)}_${hash(full)}`

/**
 * A server's part of the name holds no `__` and no edge `_`: permission rules split on `__`, so the tools
 * of a server named `a__b` must not fall under a rule for server `a` (`a_` simply reads as `a`).
 */
export const normalizeServer = (serverName: string): string =>
  normalize(serverName).replace(/_{2,}/g, "_").replace(/^_+|_+$/g, "") || "server"

/** The prefix every tool of a server shares; permission rules `mcp__server` match it. */
export const serverPrefix = (serverName: string): string => `mcp__${normalizeServer(serverName)}__`

/** The key `assign` uses for a tool: server and tool names, which cannot contain NUL. */
export const assignKey = (serverName: string, toolName: string): string => `${serverName}\u0000${toolName}`

/** The toolwright name of one server tool, before collisions are resolved. */
export const make = (serverName: string, toolName: string): string =>
  fit(`${serverPrefix(serverName)}${normalize(toolName)}`, assignKey(serverName, toolName))

/**
 * Names for a set of server tools. Tools are ordered by (server, tool) so the outcome does not depend on
 * the order servers answered in; the first keeps the plain name and any later tool whose name collides
 * gets a suffix derived from its original names.
 */
export const assign = (
  tools: ReadonlyArray<{ readonly serverName: string; readonly toolName: string }>
): ReadonlyMap<string, string> => {
  const ordered = [...tools].sort((a, b) => {
    const left = assignKey(a.serverName, a.toolName)
    const right = assignKey(b.serverName, b.toolName)
    return left < right ? -1 : left > right ? 1 : 0
  })
  const taken = new Set<string>()
  const names = new Map<string, string>()
  for (const tool of ordered) {
    const full = assignKey(tool.serverName, tool.toolName)
    if (names.has(full)) continue
    const base = make(tool.serverName, tool.toolName)
    let name = base
    for (let attempt = 0; taken.has(name); attempt++) {
      const suffix = `_${hash(attempt === 0 ? full : `${full}\u0000${attempt}`)}`
      name = `${base.slice(0, MAX_LENGTH - suffix.length)}${suffix}`
    }
    taken.add(name)
    names.set(full, name)
  }
  return names
}
