export * as BuiltinTools from "./BuiltinTools.js"
export * as GlobTool from "./glob/GlobTool.js"
export * as ReadTool from "./read/ReadTool.js"
