// A terminal for prompt tests: streams to hand a prompter, what is typed into it, and all it was shown.
import { PassThrough } from "node:stream"

export const fakeTerminal = () => {
  const input = new PassThrough()
  const output = new PassThrough()
  let shown = ""
  output.on("data", (chunk: Buffer) => {
    shown += chunk.toString("utf8")
  })
  return {
    input,
    output,
    /** Types `typed`, or ends the input (the user pressed Ctrl-D, or stdin closed) when it is undefined. */
    type: (typed: string | undefined) => {
      if (typed === undefined) input.end()
      else input.write(typed)
    },
    shown: () => shown
  }
}
