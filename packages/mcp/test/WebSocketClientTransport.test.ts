/**
 * The WebSocket client transport against a real `ws` server on 127.0.0.1: a server that stops answering
 * without closing the socket (a frozen process, a dropped network) must still end the connection, so the
 * calls in flight fail instead of waiting out MCP_TOOL_TIMEOUT.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect } from "effect"
import { WebSocketServer } from "ws"
import { WebSocketClientTransport } from "../src/internal/WebSocketClientTransport.js"

describe("WebSocketClientTransport", () => {
  it.scopedLive("a server that stops answering pings is closed by the heartbeat", () =>
    Effect.gen(function*() {
      // autoPong off: the socket stays open but nothing answers, as with a frozen server.
      const server = yield* Effect.acquireRelease(
        Effect.async<WebSocketServer>((resume) => {
          const wss: WebSocketServer = new WebSocketServer(
            { host: "127.0.0.1", port: 0, autoPong: false },
            () => resume(Effect.succeed(wss))
          )
        }),
        (wss) => Effect.async<void>((resume) => {
          for (const client of wss.clients) client.terminate()
          wss.close(() => resume(Effect.void))
        })
      )
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const transport = new WebSocketClientTransport(new URL(`ws://127.0.0.1:${port}`), {}, { heartbeatMs: 50 })
      const closed = yield* Deferred.make<void>()
      transport.onclose = () => Deferred.unsafeDone(closed, Effect.void)
      yield* Effect.promise(() => transport.start())
      yield* Deferred.await(closed)
      // Closed for good: nothing more can be sent.
      const sent = yield* Effect.promise(() =>
        transport.send({ jsonrpc: "2.0", method: "ping", id: 1 }).then(() => "sent", (error: Error) => error.message)
      )
      assert.strictEqual(sent, "WebSocket is not connected")
    }))
})
