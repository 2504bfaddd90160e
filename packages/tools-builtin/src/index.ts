export * as BuiltinTools from "./BuiltinTools.js"
