// Builds the CLI bundle and the libraries' dist/ once before the CLI's tests, so end-to-end tests run the
// real `toolwright` binary (and plugins import the real @toolwright/core) and never race to rebuild them.
import { buildLibraries } from "../../../scripts/build-libs.mjs"
import { build } from "../build.mjs"

export default async function setup(): Promise<void> {
  await Promise.all([build(), buildLibraries()])
}
