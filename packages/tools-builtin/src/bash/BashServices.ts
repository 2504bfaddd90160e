/**
 * The services the Bash and task tools need, as one layer for the built-in plugin: the session's shell
 * state (cwd, settings `env`, kill grace). Built once per runtime; closing it ends what it started.
 */
import type { Layer } from "effect"
import * as ShellState from "./ShellState.js"

export type BashServices = ShellState.ShellState

export type Options = ShellState.Options

/** Every service the shell tools need; `options.env` is settings `env`. */
export const layer = (options: Options = {}): Layer.Layer<BashServices> => ShellState.layer(options)
