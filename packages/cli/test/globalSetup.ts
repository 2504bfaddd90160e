// Builds the CLI bundle once before the CLI's tests, so end-to-end tests run the real `toolwright`
// binary and never race each other rebuilding it.
import { build } from "../build.mjs"

export default async function setup(): Promise<void> {
  await build()
}
