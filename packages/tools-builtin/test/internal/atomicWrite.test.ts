import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { build } from "esbuild"
import { isTempName, writeFileAtomic } from "../../src/internal/atomicWrite.js"
import { tempDir } from "../support/runTool.js"

const childSource = fileURLToPath(new URL("../fixtures/atomicWriteLoop.ts", import.meta.url))

/** The child bundled to one plain script, so each round starts a bare `node` in milliseconds. */
const bundleChild = (dir: string) =>
  Effect.promise(async () => {
    const outfile = path.join(dir, "atomicWriteLoop.mjs")
    await build({
      entryPoints: [childSource],
      bundle: true,
      platform: "node",
      format: "esm",
      outfile,
      logLevel: "silent"
    })
    return outfile
  })

const leftovers = (dir: string) => fs.readdirSync(dir).filter(isTempName)

/**
 * Starts the writer child, waits for its first completed replacement, lets it run a random while (a few
 * replacements' worth), then SIGKILLs it and waits for it to die.
 */
const killWriterAtRandom = (script: string, args: ReadonlyArray<string>, maxDelayMs: number) =>
  Effect.async<{ readonly signal: string | null; readonly stderr: string }>((resume) => {
    const proc = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stderr = ""
    let timer: NodeJS.Timeout | undefined
    proc.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    proc.stdout.on("data", (chunk: Buffer) => {
      if (timer === undefined && chunk.toString().includes("ready")) {
        timer = setTimeout(() => proc.kill("SIGKILL"), Math.random() * maxDelayMs)
      }
    })
    proc.on("exit", (_code, signal) => resume(Effect.succeed({ signal, stderr })))
    return Effect.sync(() => {
      clearTimeout(timer)
      proc.kill("SIGKILL")
    })
  })

describe("writeFileAtomic", () => {
  it.scopedLive("replaces the content exactly, keeps the mode, and leaves no temp file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const target = path.join(dir, "script.sh")
      fs.writeFileSync(target, "old")
      fs.chmodSync(target, 0o751)
      yield* writeFileAtomic(target, Buffer.from("#!/bin/sh\necho new\n"))
      assert.strictEqual(fs.readFileSync(target, "utf8"), "#!/bin/sh\necho new\n")
      assert.strictEqual(fs.statSync(target).mode & 0o7777, 0o751)
      yield* writeFileAtomic(path.join(dir, "fresh.txt"), Buffer.from("x"))
      assert.deepStrictEqual(fs.readdirSync(dir).sort(), ["fresh.txt", "script.sh"])
    }))

  it.scopedLive("a file whose name is at the 255-byte limit can still be replaced", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const target = path.join(dir, `${"\u00e9".repeat(125)}.txt`)
      fs.writeFileSync(target, "old")
      yield* writeFileAtomic(target, Buffer.from("new"))
      assert.strictEqual(fs.readFileSync(target, "utf8"), "new")
      assert.deepStrictEqual(leftovers(dir), [])
    }))

  it.scopedLive("fails clearly on a directory, and cleans up when the directory is missing", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const error = yield* Effect.flip(writeFileAtomic(dir, Buffer.from("x")))
      assert.strictEqual(error.message, `Could not write ${dir}: it is a directory`)
      const missing = yield* Effect.flip(writeFileAtomic(path.join(dir, "no", "such.txt"), Buffer.from("x")))
      assert.match(missing.message, /^Could not write .*such\.txt: creating a temp file: ENOENT/)
      assert.deepStrictEqual(fs.readdirSync(dir), [])
    }))

  it.scopedLive("a read-only file is not replaced behind its back (a rename would ignore its mode)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const target = path.join(dir, "locked.txt")
      fs.writeFileSync(target, "protected")
      fs.chmodSync(target, 0o444)
      const error = yield* Effect.flip(writeFileAtomic(target, Buffer.from("changed")))
      assert.strictEqual(
        error.message,
        `Could not write ${target}: the file is read-only (mode 0444). Make it writable first (chmod u+w) if it ` +
          "should change."
      )
      assert.strictEqual(fs.readFileSync(target, "utf8"), "protected")
      assert.deepStrictEqual(fs.readdirSync(dir), ["locked.txt"])
    }))

  it.scopedLive("createOnly never replaces a file that appeared meanwhile, and leaves no temp file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const target = path.join(dir, "new.txt")
      yield* writeFileAtomic(target, Buffer.from("created"), { createOnly: true })
      assert.strictEqual(fs.readFileSync(target, "utf8"), "created")
      assert.strictEqual(fs.statSync(target).nlink, 1)
      // Someone else's file is there now (an editor saved it after the tool looked): it must survive.
      fs.writeFileSync(target, "theirs")
      const error = yield* Effect.flip(writeFileAtomic(target, Buffer.from("ours"), { createOnly: true }))
      assert.strictEqual(error._tag, "AtomicWriteTargetExists")
      assert.strictEqual(fs.readFileSync(target, "utf8"), "theirs")
      assert.deepStrictEqual(fs.readdirSync(dir), ["new.txt"])
    }))

  it.scopedLive("a writer SIGKILLed at random moments leaves the old or the new file, never a truncated one", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const work = path.join(dir, "work")
      fs.mkdirSync(work)
      const script = yield* bundleChild(dir)
      const target = path.join(work, "big.bin")
      // Two contents of 8 MB that differ from their first byte to their last, so any mix or cut shows.
      const contentA = Buffer.alloc(8 * 1024 * 1024, "A")
      const contentB = Buffer.alloc(8 * 1024 * 1024 + 4096, "B")
      const fileA = path.join(dir, "a.src")
      const fileB = path.join(dir, "b.src")
      fs.writeFileSync(fileA, contentA)
      fs.writeFileSync(fileB, contentB)
      fs.writeFileSync(target, contentA)

      const seen = { a: 0, b: 0, leftovers: 0 }
      for (let round = 0; round < 10; round++) {
        const exit = yield* killWriterAtRandom(script, [target, fileA, fileB], 80)
        assert.strictEqual(exit.stderr, "")
        assert.strictEqual(exit.signal, "SIGKILL")
        const now = fs.readFileSync(target)
        const isA = now.equals(contentA)
        const isB = now.equals(contentB)
        assert(isA || isB, `round ${round}: the target has ${now.length} bytes, neither the old nor the new content`)
        if (isA) seen.a++
        else seen.b++
        // A kill between creating the temp file and renaming it may leave one behind; never more than one.
        const left = leftovers(work)
        assert(left.length <= 1, `round ${round}: ${left.length} temp files left`)
        seen.leftovers += left.length
        for (const name of left) fs.rmSync(path.join(work, name))
      }
      assert.strictEqual(seen.a + seen.b, 10)
    }), { timeout: 60_000 })
})
