/**
 * The vocabulary of permissions shared by tools and the permission stage: modes, rules with the file
 * they came from, the permission context of a session, and what a check may answer.
 */
import { Schema } from "effect"

export const PermissionMode = Schema.Literal("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
export type PermissionMode = typeof PermissionMode.Type

export const RuleBehavior = Schema.Literal("allow", "deny", "ask")
export type RuleBehavior = typeof RuleBehavior.Type

/** A rule as written (`Bash(npm run test:*)`) and where it was written, so decisions can be explained. */
export interface RuleEntry {
  readonly rule: string
  /** A settings file path, `cli`, `session` (an "allow always" answer), or `hook`. */
  readonly source: string
  /** The directory `/path` rules of this source are relative to (the project a settings file governs). */
  readonly root?: string
}

/** Everything the permission stage knows about the session's policy. */
export interface PermissionContext {
  readonly mode: PermissionMode
  readonly allow: ReadonlyArray<RuleEntry>
  readonly deny: ReadonlyArray<RuleEntry>
  readonly ask: ReadonlyArray<RuleEntry>
  readonly additionalDirectories: ReadonlyArray<string>
  /** The user's home, for `~/` path rules. */
  readonly homeDir?: string
  /** Claude Code's `permissions.denyInsteadOfPrompting`: whatever would ask is denied at once, in any mode. */
  readonly denyInsteadOfPrompting?: boolean
  /**
   * Claude Code's `permissions.blockReadsOutsideWorkingDirectories` / `blockWritesOutsideWorkingDirectories`:
   * the file tools (path rules: Read, Glob, Grep / Write, Edit, NotebookEdit) refuse paths outside the working
   * directories in every mode, bypassPermissions included. Shell commands and MCP tools are not covered.
   */
  readonly blockReadsOutsideWorkingDirectories?: boolean
  readonly blockWritesOutsideWorkingDirectories?: boolean
}

export const emptyPermissionContext = (mode: PermissionMode = "default"): PermissionContext => ({
  mode,
  allow: [],
  deny: [],
  ask: [],
  additionalDirectories: []
})

/**
 * What a tool's own `checkPermissions` answers. `passthrough`: no tool-specific objection, the policy
 * decides. `allow` may carry an updated input; `ask` and `deny` carry the message shown to the user and
 * the model, and `ask` may suggest rules for "allow always".
 */
export type PermissionResult =
  | { readonly behavior: "passthrough" }
  | { readonly behavior: "allow"; readonly updatedInput?: unknown; readonly reason?: string }
  | { readonly behavior: "ask"; readonly message: string; readonly suggestions?: ReadonlyArray<string> }
  | { readonly behavior: "deny"; readonly message: string }

export const passthrough: PermissionResult = { behavior: "passthrough" }

/** The outcome of the whole permission stage for one call, with what decided it. */
export type PermissionDecision =
  | { readonly behavior: "allow"; readonly input: unknown; readonly reason: string }
  | { readonly behavior: "deny"; readonly message: string; readonly reason: string }
  | {
    readonly behavior: "ask"
    readonly message: string
    readonly reason: string
    readonly suggestions: ReadonlyArray<string>
  }

/**
 * An answer from the prompter. `rules` are remembered ("allow always": for the session and in the local
 * settings) when present; `sessionRules` for the session only.
 */
export type PermissionAnswer =
  | {
    readonly behavior: "allow"
    readonly updatedInput?: unknown
    readonly rules?: ReadonlyArray<string>
    readonly sessionRules?: ReadonlyArray<string>
  }
  | { readonly behavior: "deny"; readonly message: string }
