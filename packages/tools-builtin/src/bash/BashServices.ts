/**
 * The services the Bash and task tools need, as one layer for the built-in plugin: the session's shell
 * state (cwd, settings `env`, kill grace), the background tasks and the loaded bash grammar. Built once per
 * runtime; closing it kills every task still running.
 */
import { Layer } from "effect"
import * as CommandSemantics from "./commandSemantics.js"
import * as TaskManager from "../tasks/TaskManager.js"
import * as ShellState from "./ShellState.js"

export type BashServices = ShellState.ShellState | TaskManager.TaskManager

export type Options = ShellState.Options

/** Every service the shell tools need; `options.env` is settings `env`. */
export const layer = (options: Options = {}): Layer.Layer<BashServices> =>
  // The bash grammar is loaded with the layer, so the first command is analysed without waiting.
  Layer.mergeAll(ShellState.layer(options), TaskManager.layer, Layer.effectDiscard(CommandSemantics.load))
