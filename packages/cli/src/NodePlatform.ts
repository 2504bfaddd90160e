/**
 * The Node platform services the CLI runs on: `NodeContext.layer`, except that `FileSystem.realPath` is
 * the native `realpath(3)`. @effect/platform-node resolves it with Node's JavaScript `fs.realpath`, which
 * lstat()s every component of the path; the permission policy resolves the paths of every call, so that
 * was most of what the policy cost a Read.
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"

/** FileSystem with a native `realPath`; a path it cannot resolve gets the platform's own error. */
const nativeRealPath = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (service): FileSystem.FileSystem => ({
    ...service,
    realPath: (path) =>
      Effect.async<string | undefined>((resume) => {
        fs.realpath.native(path, (error, resolved) => resume(Effect.succeed(error === null ? resolved : undefined)))
      }).pipe(Effect.flatMap((resolved) => (resolved === undefined ? service.realPath(path) : Effect.succeed(resolved))))
  }))
)

export const layer: Layer.Layer<Layer.Layer.Success<typeof NodeContext.layer>> = Layer.merge(
  NodeContext.layer,
  nativeRealPath.pipe(Layer.provide(NodeContext.layer))
)
