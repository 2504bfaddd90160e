// Bundles the CLI into one CommonJS file, dist/toolwright.cjs, and writes dist/toolwright.mjs, the `toolwright`
// binary: a small launcher that compiles the bundle with a V8 code cache (see src/launcher.mjs). Packages that
// locate files next to themselves at run time (ripgrep's binary, wasm grammars) stay external and resolve from
// this package's node_modules. unpdf (2 MB of pdf.js) stays external too: Read imports it only for a PDF, and
// bundled it would be parsed at every start.
import * as esbuild from "esbuild"
import { chmodSync, copyFileSync, readdirSync, rmSync } from "node:fs"

export const external = ["@vscode/ripgrep", "web-tree-sitter", "tree-sitter-bash", "sharp", "unpdf", "@anthropic-ai/sandbox-runtime"]

const dist = new URL("./dist/", import.meta.url)

export const build = async () => {
  await esbuild.build({
    entryPoints: [new URL("./src/bin.ts", import.meta.url).pathname],
    outfile: new URL("toolwright.cjs", dist).pathname,
    bundle: true,
    platform: "node",
    // CommonJS, because Node 20 can compile a script with a code cache (node:vm) but not an ES module.
    format: "cjs",
    target: "node20",
    external,
    // The bundle is built from the libraries' sources, never from their dist/ builds.
    alias: {
      "@toolwright/core": new URL("../core/src/index.ts", import.meta.url).pathname,
      "@toolwright/tools-builtin": new URL("../tools-builtin/src/index.ts", import.meta.url).pathname,
      "@toolwright/mcp": new URL("../mcp/src/index.ts", import.meta.url).pathname
    },
    // The sources are ES modules: `import.meta.url` is the bundle's own URL.
    define: { "import.meta.url": "__twImportMetaUrl" },
    banner: { js: "const __twImportMetaUrl = require(\"node:url\").pathToFileURL(__filename).href;" },
    logLevel: "warning",
    legalComments: "none",
    // Parsing the bundle is a large part of a cold start when there is no code cache yet: minified, it
    // parses faster; names are kept so errors and spans still read well.
    minify: true,
    keepNames: true
  })
  // The launcher is written after the bundle: `pnpm toolwright` compares its time with the sources'.
  copyFileSync(new URL("./src/launcher.mjs", import.meta.url), new URL("toolwright.mjs", dist))
  chmodSync(new URL("toolwright.mjs", dist), 0o755)
  for (const name of readdirSync(dist)) {
    if (name !== "toolwright.cjs" && name !== "toolwright.mjs") rmSync(new URL(name, dist), { force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await build()
