/**
 * A plugin: a named, versioned set of tools and the Layer that provides what they need. A package's
 * default export is a `ToolPlugin`; the registry builds its layer once and provides it to its tools.
 */
import { Layer, Predicate } from "effect"
import type * as Tool from "./Tool.js"

export const TypeId: unique symbol = Symbol.for("@toolwright/core/ToolPlugin")
export type TypeId = typeof TypeId

export interface ToolPlugin<ROut = never, E = never, RIn = never> {
  readonly [TypeId]: TypeId
  readonly name: string
  readonly version: string
  readonly tools: ReadonlyArray<Tool.AnyWith<ROut | RIn>>
  readonly layer: Layer.Layer<ROut, E, RIn>
}

/**
 * Any plugin, whatever its layer provides and needs: what loaders and registries hold. (A layer is
 * contravariant in what it provides, so `never` here accepts every plugin.)
 */
export interface Any {
  readonly [TypeId]: TypeId
  readonly name: string
  readonly version: string
  readonly tools: ReadonlyArray<Tool.AnyWith<unknown>>
  readonly layer: Layer.Layer<never, unknown, unknown>
}

/** What a plugin needs from the environment it is loaded into. */
export type Requirements<P> = P extends ToolPlugin<infer _ROut, infer _E, infer RIn> ? RIn : never
/** How building a plugin's layer can fail. */
export type Errors<P> = P extends ToolPlugin<infer _ROut, infer E, infer _RIn> ? E : never

/** A plugin whose tools need only what the runtime's environment has (`RIn`). */
export function make<RIn = never>(options: {
  readonly name: string
  readonly version: string
  readonly tools: ReadonlyArray<Tool.AnyWith<RIn>>
}): ToolPlugin<never, never, RIn>
/** A plugin whose tools need services its own layer builds. */
export function make<ROut, E, RIn>(options: {
  readonly name: string
  readonly version: string
  readonly tools: ReadonlyArray<Tool.AnyWith<ROut | RIn>>
  readonly layer: Layer.Layer<ROut, E, RIn>
}): ToolPlugin<ROut, E, RIn>
export function make(options: {
  readonly name: string
  readonly version: string
  readonly tools: ReadonlyArray<Tool.AnyWith<unknown>>
  readonly layer?: Layer.Layer<never, unknown, unknown>
}): Any {
  return {
    [TypeId]: TypeId,
    name: options.name,
    version: options.version,
    tools: options.tools,
    layer: options.layer ?? Layer.empty
  }
}

export const isToolPlugin = (u: unknown): u is Any => Predicate.hasProperty(u, TypeId)

/** Where a host that runs the code from somewhere `import()` cannot work puts its own importer. */
const importerKey = Symbol.for("@toolwright/core/ToolPlugin/importModule")

/**
 * Imports an ES module: a plugin, or a package loaded on first use. Usually `load` (the caller's own
 * `import()`, so a package resolves from the caller's package, not from this one: core does not depend on
 * sharp or unpdf), or plain `import()` for an absolute URL; the CLI binary runs its bundle from a V8 code
 * cache, where Node 20 loses the `import()` callback of cached functions, so its launcher registers an
 * importer of its own (resolving from the bundle's directory) and every dynamic import of the toolwright
 * packages goes through here.
 */
export const importModule = <A = unknown>(specifier: string, load?: () => Promise<A>): Promise<A> => {
  const importer: unknown = Reflect.get(globalThis, importerKey)
  if (typeof importer === "function") return importer(specifier)
  return load === undefined ? import(specifier) : load()
}
