// `pnpm bench`: runs every packages/*/bench/*.bench.ts one after another (each measures its own
// baseline in the same run and prints ratios), and reports which ones failed.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { join, relative } from "node:path"

const root = join(import.meta.dirname, "..")
const only = process.argv.slice(2)
const files = readdirSync(join(root, "packages")).flatMap((pkg) => {
  const dir = join(root, "packages", pkg, "bench")
  return existsSync(dir)
    ? readdirSync(dir).filter((name) => name.endsWith(".bench.ts")).map((name) => join(dir, name))
    : []
}).filter((file) => only.length === 0 || only.some((word) => file.includes(word)))

const failed = []
for (const file of files) {
  console.log(`\n== ${relative(root, file)}`)
  // `--conditions=source`: benchmarks measure the sources, never a stale dist/ build.
  const status = spawnSync(process.execPath, ["--expose-gc", "--conditions=source", "--import", "tsx", file], {
    stdio: "inherit",
    cwd: root
  }).status
  if (status !== 0) failed.push(relative(root, file))
}
console.log(`\n${files.length - failed.length} benchmarks ran, ${failed.length} failed${failed.length ? ": " + failed.join(", ") : ""}`)
process.exit(failed.length === 0 ? 0 : 1)
