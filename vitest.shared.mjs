// Inside the repository the library packages are read from their TypeScript sources; their package
// exports point plain Node at the built dist/ files instead.
import { fileURLToPath } from "node:url"

const source = (name) => fileURLToPath(new URL(`./packages/${name}/src/index.ts`, import.meta.url))

export const sourceAliases = {
  "@toolwright/core": source("core"),
  "@toolwright/tools-builtin": source("tools-builtin"),
  "@toolwright/mcp": source("mcp")
}
