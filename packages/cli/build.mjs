// Bundles the CLI into one ESM file, dist/toolwright.mjs. Packages that locate files next to themselves
// at run time (ripgrep's binary, wasm grammars) stay external and resolve from this package's node_modules.
// unpdf (2 MB of pdf.js) stays external too: Read imports it only for a PDF, and bundled it would be parsed
// at every start.
import * as esbuild from "esbuild"
import { chmodSync } from "node:fs"

export const external = ["@vscode/ripgrep", "web-tree-sitter", "tree-sitter-bash", "sharp", "unpdf", "@anthropic-ai/sandbox-runtime"]

export const build = async () => {
  await esbuild.build({
    entryPoints: [new URL("./src/bin.ts", import.meta.url).pathname],
    outfile: new URL("./dist/toolwright.mjs", import.meta.url).pathname,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    external,
    // The bundle is built from the libraries' sources, never from their dist/ builds.
    alias: {
      "@toolwright/core": new URL("../core/src/index.ts", import.meta.url).pathname,
      "@toolwright/tools-builtin": new URL("../tools-builtin/src/index.ts", import.meta.url).pathname,
      "@toolwright/mcp": new URL("../mcp/src/index.ts", import.meta.url).pathname
    },
    banner: {
      js: "import { createRequire as __twCreateRequire } from 'node:module';const require = __twCreateRequire(import.meta.url);"
    },
    logLevel: "warning",
    legalComments: "none",
    // Parsing the bundle is most of a cold start (mcp serve must answer tools/list quickly): minified, it
    // parses faster; names are kept so errors and spans still read well.
    minify: true,
    keepNames: true
  })
  chmodSync(new URL("./dist/toolwright.mjs", import.meta.url), 0o755)
}

if (import.meta.url === `file://${process.argv[1]}`) await build()
