// Builds the CLI bundle and the libraries' dist/ once before the CLI's tests, so end-to-end tests run the
// real `toolwright` binary (and plugins import the real @toolwright/core) and never race to rebuild them.
// The binary's code cache goes to one temporary directory for the whole run (tests give each spawned CLI
// a temporary HOME, where a cache would be written at every start and never reused).
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { buildLibraries } from "../../../scripts/build-libs.mjs"
import { build } from "../build.mjs"

export default async function setup(): Promise<() => void> {
  await Promise.all([build(), buildLibraries()])
  const cacheDir = mkdtempSync(join(tmpdir(), "tw-test-code-cache-"))
  process.env.TOOLWRIGHT_CACHE_DIR = cacheDir
  return () => rmSync(cacheDir, { recursive: true, force: true })
}
