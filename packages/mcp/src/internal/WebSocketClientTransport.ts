/**
 * An MCP client transport over WebSocket (subprotocol `mcp`) built on `ws`, because the SDK's own
 * WebSocket transport needs a global `WebSocket`, which Node 20 does not have, and cannot send headers.
 * A ping heartbeat notices a server that stops answering without closing the socket (a frozen process, a
 * dropped network): the socket is then closed, which fails the calls in flight at once.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js"
import WebSocket from "ws"

/** A ping every 5 s; no pong by the next one means the server is gone (noticed within ~10 s). */
const DEFAULT_HEARTBEAT_MS = 5_000

export class WebSocketClientTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined
  #socket: WebSocket | undefined
  readonly #url: URL
  readonly #headers: Readonly<Record<string, string>>
  readonly #heartbeatMs: number
  #heartbeat: ReturnType<typeof setInterval> | undefined

  constructor(
    url: URL,
    headers: Readonly<Record<string, string>>,
    options: { readonly heartbeatMs?: number } = {}
  ) {
    this.#url = url
    this.#headers = headers
    this.#heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.#url, "mcp", { headers: { ...this.#headers } })
      this.#socket = socket
      let opened = false
      socket.on("open", () => {
        opened = true
        let answered = true
        socket.on("pong", () => {
          answered = true
        })
        this.#heartbeat = setInterval(() => {
          // terminate() rather than close(): a server that does not answer pings will not answer a close either.
          if (!answered) return socket.terminate()
          answered = false
          socket.ping()
        }, this.#heartbeatMs)
        this.#heartbeat.unref()
        resolve()
      })
      socket.on("unexpected-response", (_request, response) => {
        const error = new Error(`WebSocket upgrade refused with HTTP ${response.statusCode ?? "error"}`)
        Object.assign(error, { code: response.statusCode })
        socket.terminate()
        if (!opened) reject(error)
        else this.onerror?.(error)
      })
      socket.on("error", (error) => {
        if (!opened) reject(error)
        else this.onerror?.(error)
      })
      socket.on("close", () => {
        clearInterval(this.#heartbeat)
        this.onclose?.()
      })
      socket.on("message", (data: WebSocket.RawData) => {
        let parsed: JSONRPCMessage
        try {
          parsed = JSONRPCMessageSchema.parse(JSON.parse(data.toString()))
        } catch (error) {
          this.onerror?.(error instanceof Error ? error : new Error(String(error)))
          return
        }
        this.onmessage?.(parsed)
      })
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = this.#socket
      if (socket === undefined || socket.readyState !== WebSocket.OPEN) {
        reject(new Error("WebSocket is not connected"))
        return
      }
      socket.send(JSON.stringify(message), (error) => (error === undefined || error === null ? resolve() : reject(error)))
    })
  }

  close(): Promise<void> {
    clearInterval(this.#heartbeat)
    this.#socket?.close()
    return Promise.resolve()
  }
}
