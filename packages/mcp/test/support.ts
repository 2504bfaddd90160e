import { Effect } from "effect"
import * as net from "node:net"

/** A port nothing listens on: the kernel hands it out on 127.0.0.1 and it is closed again at once. */
export const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})
