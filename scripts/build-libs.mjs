// Builds the library packages (@toolwright/core, tools-builtin, mcp) to dist/index.js, so plain Node can
// import them: a plugin package is JavaScript that imports @toolwright/core. Inside the repository, the
// type checker, vitest and the CLI bundle read the TypeScript sources directly.
import * as esbuild from "esbuild"
import { join } from "node:path"

const root = join(import.meta.dirname, "..")
export const libraries = ["core", "tools-builtin", "mcp"]

export const buildLibraries = async () => {
  await Promise.all(libraries.map((name) =>
    esbuild.build({
      entryPoints: [join(root, "packages", name, "src", "index.ts")],
      outfile: join(root, "packages", name, "dist", "index.js"),
      bundle: true,
      packages: "external",
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "warning",
      legalComments: "none"
    })
  ))
}

if (import.meta.url === `file://${process.argv[1]}`) await buildLibraries()
