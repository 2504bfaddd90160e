// The `toolwright` binary's code cache: written once for a build, reused (dynamic imports included, which
// Node 20 breaks in functions restored from a cache unless they go through the launcher's importer), and
// never reused for another build or Node.
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const dist = join(import.meta.dirname, "..", "dist")
const bin = join(dist, "toolwright.mjs")
const fixtures = join(import.meta.dirname, "fixtures")

const withCacheDir = (f: (dir: string, cacheDir: string) => void) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "tw-launcher-")))
  try {
    f(dir, join(dir, "cache"))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const run = (dir: string, env: Record<string, string>, args: ReadonlyArray<string>) => {
  const result = spawnSync(process.execPath, [bin, ...args, "--cwd", dir], {
    encoding: "utf8",
    input: "",
    env: { ...process.env, HOME: dir, ...env }
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

const cacheFiles = (cacheDir: string) => readdirSync(cacheDir).filter((name) => name.endsWith(".v8cache"))

/** The header the launcher must write: which build of the bundle, and which Node. */
const expectedHeader = () => {
  const stat = statSync(join(dist, "toolwright.cjs"))
  return JSON.stringify([stat.size, stat.mtimeMs, stat.ino, process.version, process.arch])
}

const shout = (dir: string, env: Record<string, string>) => {
  mkdirSync(join(dir, ".toolwright"), { recursive: true })
  writeFileSync(join(dir, ".toolwright", "settings.json"), JSON.stringify({ plugins: [join(fixtures, "shout-plugin.mjs")] }))
  return run(dir, env, ["run", "Shout", "--input", `{"text":"cached"}`])
}

describe("the toolwright binary's code cache", () => {
  it("is written once, private, for this build and Node, and reused with dynamic imports working", () =>
    withCacheDir((dir, cacheDir) => {
      const env = { TOOLWRIGHT_CACHE_DIR: cacheDir }
      const first = shout(dir, env)
      assert.strictEqual(first.code, 0, first.stderr)
      assert.strictEqual(first.stdout, "CACHED\n")
      const [file] = cacheFiles(cacheDir)
      assert.isDefined(file)
      const path = join(cacheDir, file!)
      assert.strictEqual(statSync(path).mode & 0o777, 0o600)
      const bytes = readFileSync(path)
      assert.strictEqual(bytes.subarray(0, bytes.indexOf(10)).toString("utf8"), expectedHeader())
      const written = statSync(path).mtimeMs

      // The plugin is loaded with import() from functions restored from the cache.
      const second = shout(dir, env)
      assert.strictEqual(second.code, 0, second.stderr)
      assert.strictEqual(second.stdout, "CACHED\n")
      assert.strictEqual(second.stderr, `[Shout] {"shouting":6}\n`)
      assert.strictEqual(statSync(path).mtimeMs, written, "a valid cache is not rewritten")
      assert.deepStrictEqual(cacheFiles(cacheDir), [file])
    }))

  it("replaces a cache made by another build instead of running it", () =>
    withCacheDir((dir, cacheDir) => {
      const env = { TOOLWRIGHT_CACHE_DIR: cacheDir }
      assert.strictEqual(run(dir, env, ["tools", "list"]).code, 0)
      const [file] = cacheFiles(cacheDir)
      const path = join(cacheDir, file!)
      const bytes = readFileSync(path)
      // Same V8 data, but the header of another build: V8 alone would accept it (same source length).
      writeFileSync(path, Buffer.concat([Buffer.from(`[1,2,3,"v0","x"]\n`), bytes.subarray(bytes.indexOf(10) + 1)]))
      const result = shout(dir, env)
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, "CACHED\n")
      const rewritten = readFileSync(path)
      assert.strictEqual(rewritten.subarray(0, rewritten.indexOf(10)).toString("utf8"), expectedHeader())
    }))

  it("writes nothing with TOOLWRIGHT_CODE_CACHE=0, and runs the same", () =>
    withCacheDir((dir, cacheDir) => {
      const result = shout(dir, { TOOLWRIGHT_CACHE_DIR: cacheDir, TOOLWRIGHT_CODE_CACHE: "0" })
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, "CACHED\n")
      assert.throws(() => readdirSync(cacheDir), /ENOENT/)
    }))

  it("runs when the cache directory cannot be written", () =>
    withCacheDir((dir) => {
      const blocker = join(dir, "not-a-dir")
      writeFileSync(blocker, "")
      const result = shout(dir, { TOOLWRIGHT_CACHE_DIR: join(blocker, "cache") })
      assert.strictEqual(result.code, 0, result.stderr)
      assert.strictEqual(result.stdout, "CACHED\n")
      assert.strictEqual(result.stderr, `[Shout] {"shouting":6}\n`)
    }))
})
