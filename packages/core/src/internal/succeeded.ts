/**
 * Whether an Effect has already succeeded. `Effect.succeed(a)` is an `Exit`, so a stage that answers with
 * one can be read on the spot: the pipeline spares a fiber step (and its continuation) per stage.
 */
import { Exit } from "effect"
import type { Effect } from "effect"

export const succeeded = <A, E, R>(effect: Effect.Effect<A, E, R>): effect is Exit.Success<A, E> =>
  Exit.isExit(effect) && Exit.isSuccess(effect)
