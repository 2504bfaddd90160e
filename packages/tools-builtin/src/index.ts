export * as BuiltinTools from "./BuiltinTools.js"
export * as ReadTool from "./read/ReadTool.js"
