export * as CliRuntime from "./CliRuntime.js"
export { main, root, VERSION } from "./main.js"
