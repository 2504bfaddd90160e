// The README's main job: real tool calls through the full pipeline on this repository, via the CLI.
import { spawnSync } from "node:child_process"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
const calls = [
  ["tools", "list"],
  ["run", "Glob", "--input", JSON.stringify({ pattern: "packages/*/src/*.ts" })],
  ["run", "Read", "--input", JSON.stringify({ file_path: "package.json", limit: 12 })],
  ["run", "Read", "--input", JSON.stringify({ file_path: "no/such/file.txt" })]
]
for (const args of calls) {
  console.log(`\n$ toolwright ${args.map((arg) => (/[\s{"]/.test(arg) ? `'${arg}'` : arg)).join(" ")}`)
  const { status } = spawnSync(process.execPath, [join(root, "scripts/toolwright.mjs"), ...args], {
    stdio: "inherit",
    cwd: root
  })
  console.log(`(exit ${status})`)
}
