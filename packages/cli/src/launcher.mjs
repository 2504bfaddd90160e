#!/usr/bin/env node
// The `toolwright` binary (copied to dist/toolwright.mjs by build.mjs): runs the bundled CLI,
// dist/toolwright.cjs, compiled with a V8 code cache. Compiling the 1.7 MB bundle is a large part of a cold
// start (an MCP client waits for `toolwright mcp serve` to answer), and Node 20 has no compile cache for ES
// modules, so the bundle is a CommonJS script run through node:vm with `cachedData`.
//
// The cache is one file per bundle path under ~/.toolwright/cache (TOOLWRIGHT_CACHE_DIR overrides it); a
// header records which build and which Node made it, so a rebuilt bundle or another Node never reuses it
// (V8 itself checks only the source's length). It is written once, atomically, after the first run has
// compiled what a start needs. Any failure around the cache only costs the speed-up: the CLI still runs.
// TOOLWRIGHT_CODE_CACHE=0 turns it off.
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"

const bundle = fileURLToPath(new URL("./toolwright.cjs", import.meta.url))
const fd = fs.openSync(bundle, "r")
const stat = fs.fstatSync(fd)
// The shebang line is kept blank rather than removed, so line numbers in stack traces stay right.
const source = fs.readFileSync(fd, "utf8").replace(/^#!.*/, "")
fs.closeSync(fd)

const enabled = process.env.TOOLWRIGHT_CODE_CACHE !== "0"
const cacheDir = process.env.TOOLWRIGHT_CACHE_DIR || path.join(os.homedir(), ".toolwright", "cache")
const cacheFile = path.join(
  cacheDir,
  `cli-${createHash("sha256").update(bundle).digest("hex").slice(0, 16)}.v8cache`
)
const header = `${JSON.stringify([stat.size, stat.mtimeMs, stat.ino, process.version, process.arch])}\n`

/** The cached code for exactly this build and this Node, if there is one. */
const readCache = () => {
  if (!enabled) return undefined
  try {
    const data = fs.readFileSync(cacheFile)
    const end = data.indexOf(10)
    return end > 0 && data.subarray(0, end + 1).toString("utf8") === header ? data.subarray(end + 1) : undefined
  } catch {
    return undefined
  }
}

const cachedData = readCache()
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: bundle,
  cachedData
})

let saved = !enabled || (cachedData !== undefined && !script.cachedDataRejected)
const save = () => {
  if (saved) return
  saved = true
  const temporary = `${cacheFile}.${process.pid}.tmp`
  try {
    fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 })
    fs.writeFileSync(temporary, Buffer.concat([Buffer.from(header), script.createCachedData()]), { mode: 0o600 })
    fs.renameSync(temporary, cacheFile)
  } catch {
    try {
      fs.rmSync(temporary, { force: true })
    } catch {
      // Nothing was written (the directory itself is unusable).
    }
  }
}
if (!saved) {
  // After the start has compiled what it needs (a server answering its first requests), or at exit for a
  // short command: the cache then holds the functions a start runs, not only the top level.
  setTimeout(save, 1500).unref()
  process.once("exit", save)
}

// Node 20 loses the `import()` callback of functions compiled from a code cache, so the bundle's dynamic
// imports (plugins, sharp, unpdf, the sandbox runtime) go through this module's `import()` instead (see
// ToolPlugin.importModule). Specifiers resolve from dist/, the bundle's own directory.
Reflect.set(globalThis, Symbol.for("@toolwright/core/ToolPlugin/importModule"), (specifier) => import(specifier))

const module = { exports: {} }
script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle))
