/**
 * The services the Bash and task tools need, as one layer for the built-in plugin: the session's shell
 * state (cwd, settings `env`, kill grace), the background tasks, the sandbox and the loaded bash grammar.
 * Built once per runtime; closing it kills every task still running and stops the sandbox.
 */
import { Layer } from "effect"
import * as CommandSemantics from "./commandSemantics.js"
import * as TaskManager from "../tasks/TaskManager.js"
import * as Sandbox from "./Sandbox.js"
import * as ShellState from "./ShellState.js"

export type BashServices = ShellState.ShellState | TaskManager.TaskManager | Sandbox.Sandbox

export interface Options extends ShellState.Options {
  /** Settings `sandbox`: run every command under the sandbox runtime (off by default). */
  readonly sandbox?: Sandbox.Settings
}

/** Every service the shell tools need; `options.env` is settings `env`. */
export const layer = (options: Options = {}): Layer.Layer<BashServices> =>
  // The bash grammar is loaded with the layer, so the first command is analysed without waiting.
  Layer.mergeAll(
    ShellState.layer(options),
    TaskManager.layer,
    Sandbox.layer(options.sandbox),
    Layer.effectDiscard(CommandSemantics.load)
  )
