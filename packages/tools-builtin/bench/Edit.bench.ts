/**
 * Edit of a 10 MB file through the whole pipeline (`ToolRuntime.execute`: validation with its staleness
 * precheck, permission, the edit with its content-hash check, atomic write with fsync, read-state update)
 * against the baseline of plain node fs: read the file, replace the string, write it back. A second line
 * compares with a baseline that also writes atomically (temp file, fsync, rename), to separate the tool's
 * own work from the price of durability. Runs are interleaved and medians reported; the file is removed.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Message, Permission, ToolRegistry, ToolRuntime, ToolUseContext } from "@toolwright/core"
import { Effect, Layer, ManagedRuntime } from "effect"
import { EditTool } from "../src/edit/EditTool.js"
import { recordRead } from "../src/internal/fileState.js"

const RUNS = 9
const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "toolwright-edit-bench-")))
const toolFile = path.join(root, "big-tool.ts")
const plainFile = path.join(root, "big-plain.ts")
const atomicFile = path.join(root, "big-atomic.ts")

/** About 10 MB of source-like lines with one unique marker in the middle. */
const generate = (): string => {
  const line = (i: number) => `export const value${i} = compute(${i}, "${"x".repeat(24)}") // line ${i}\n`
  const lines = Array.from({ length: 140_000 }, (_, i) => line(i))
  lines[70_000] = "const MARKER_A = 1\n"
  return lines.join("")
}

const runtime = ManagedRuntime.make(ToolRuntime.layerDefault.pipe(Layer.provide(ToolRegistry.layerTools([EditTool]))))
const context = ToolUseContext.make({
  cwd: root,
  permissionContext: Permission.emptyPermissionContext("bypassPermissions")
})

const markers = (i: number) => (i % 2 === 0 ? ["MARKER_A", "MARKER_B"] : ["MARKER_B", "MARKER_A"])

const editWithTool = (i: number) => {
  const [from, to] = markers(i)
  return runtime.runPromise(
    Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
      rt.execute(
        {
          type: "tool_use",
          id: "toolu_bench",
          name: "Edit",
          input: { file_path: toolFile, old_string: `const ${from} = 1`, new_string: `const ${to} = 1` }
        },
        context,
        () => Effect.void
      ))
  ).then((event) => {
    if (event.result.is_error === true) throw new Error(`Edit failed: ${Message.contentText(event.result.content)}`)
  })
}

const editWithFs = (i: number) => {
  const [from, to] = markers(i)
  const text = fs.readFileSync(plainFile, "utf8")
  fs.writeFileSync(plainFile, text.replace(`const ${from} = 1`, `const ${to} = 1`))
}

const editWithFsAtomic = (i: number) => {
  const [from, to] = markers(i)
  const text = fs.readFileSync(atomicFile, "utf8")
  const temp = `${atomicFile}.tmp`
  const fd = fs.openSync(temp, "w")
  fs.writeFileSync(fd, text.replace(`const ${from} = 1`, `const ${to} = 1`))
  fs.fsyncSync(fd)
  fs.closeSync(fd)
  fs.renameSync(temp, atomicFile)
}

const time = async (f: () => unknown): Promise<number> => {
  const start = performance.now()
  await f()
  return performance.now() - start
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

const main = async () => {
  const content = generate()
  for (const file of [toolFile, plainFile, atomicFile]) fs.writeFileSync(file, content)
  // The session has read the file, as a model would have before editing it.
  recordRead(context, toolFile, fs.readFileSync(toolFile), fs.statSync(toolFile).mtimeMs)
  const sizeMb = (fs.statSync(toolFile).size / 1024 / 1024).toFixed(1)

  const tool: Array<number> = []
  const plain: Array<number> = []
  const atomic: Array<number> = []
  await editWithTool(0)
  editWithFs(0)
  editWithFsAtomic(0)
  for (let i = 1; i <= RUNS; i++) {
    tool.push(await time(() => editWithTool(i)))
    plain.push(await time(() => editWithFs(i)))
    atomic.push(await time(() => editWithFsAtomic(i)))
  }
  const expected = RUNS % 2 === 0 ? "MARKER_B" : "MARKER_A"
  if (!fs.readFileSync(toolFile, "utf8").includes(`const ${expected} = 1`)) throw new Error("the edits did not land")

  const t = median(tool)
  const p = median(plain)
  const a = median(atomic)
  console.log(
    `Edit ${sizeMb} MB vs read+replace+write: ${t.toFixed(1)} ms vs ${p.toFixed(1)} ms (ratio ${(t / p).toFixed(2)})`
  )
  console.log(
    `Edit ${sizeMb} MB vs read+replace+atomic write (fsync, rename): ${t.toFixed(1)} ms vs ${a.toFixed(1)} ms ` +
      `(ratio ${(t / a).toFixed(2)})`
  )
}

main().finally(() => runtime.dispose().then(() => fs.rmSync(root, { recursive: true, force: true }))).catch(
  (error: unknown) => {
    console.error(error)
    process.exitCode = 1
  }
)
