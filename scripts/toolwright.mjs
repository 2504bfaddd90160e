// `pnpm -s toolwright ARGS`: runs the bundled CLI, rebuilding the bundle first when any source is newer.
import { existsSync, readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"

const root = join(import.meta.dirname, "..")
const bundle = join(root, "packages/cli/dist/toolwright.mjs")

const newestSource = (dir) => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full))
    else if (entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(full).mtimeMs)
  }
  return newest
}

const stale = () => {
  if (!existsSync(bundle)) return true
  const built = statSync(bundle).mtimeMs
  return readdirSync(join(root, "packages")).some((pkg) => {
    const src = join(root, "packages", pkg, "src")
    return existsSync(src) && newestSource(src) > built
  })
}

if (stale()) {
  const { build } = await import(pathToFileURL(join(root, "packages/cli/build.mjs")).href)
  await build()
}
await import(pathToFileURL(bundle).href)
