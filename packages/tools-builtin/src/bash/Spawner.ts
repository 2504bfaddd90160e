/**
 * Starts Bash commands from a small helper process instead of the agent's own. `fork()` copies the parent's
 * page tables, so a spawn from a Node process holding a few hundred MB costs 4-8 ms of the call, and from a
 * bare Node helper about 1 ms. The helper is started once per process (warmed shortly after start;
 * `TOOLWRIGHT_BASH_SPAWNER=0` turns it off) and receives each command over its IPC channel. The command's
 * stdout is a Unix socket the helper connects to this process, so the output never passes through the helper;
 * its pid comes back so the caller signals its process group directly, as for a command it spawned itself,
 * and the helper reports the exit. When the helper cannot start
 * a command (it reports why, or is not there), `start` answers undefined and the caller spawns the command
 * itself, which reports any error the way it always has. A helper that dies after acknowledging a command
 * fails the call (`Lost`): the command may have started, so it is not started twice.
 *
 * The socket lives in the shell's private state directory (0700, checked), and each connection must first
 * name the random id of a pending command, so nobody else can feed a command's output.
 */
import * as ChildProcess from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import type { Readable } from "node:stream"
import { procStat } from "../internal/procStat.js"

/** How the command's leader ended, as the helper saw it. */
export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface Started {
  readonly _tag: "Started"
  readonly pid: number
  readonly stdout: Readable
  readonly exited: Promise<Exit>
}

/**
 * The helper went away while starting the command: it may have started it, so it must not be started again
 * here; the call fails and says so (later calls spawn directly).
 */
export interface Lost {
  readonly _tag: "Lost"
  readonly message: string
}

/**
 * The helper: acknowledges the command (from then on it may have started it), connects to the socket, names
 * the command, hands the connected socket to the command as its stdout, then closes its own copy. (Node's
 * own `pipe` stdio is a socket pair too, so the command sees what it saw when spawned here.) It exits when
 * the parent goes (its IPC channel closes).
 */
const HELPER = `
const cp = require("node:child_process")
const net = require("node:net")
const socketPath = process.argv[1]
process.on("disconnect", () => process.exit(0))
process.on("message", (m) => {
  const reply = (message) => { if (process.connected) process.send(message) }
  reply({ id: m.id, ack: true })
  const socket = net.connect(socketPath)
  socket.once("error", (error) => reply({ id: m.id, error: error.message }))
  socket.once("connect", () => socket.write(m.id + "\\n", () => {
    let child
    try {
      child = cp.spawn(m.file, m.args, { cwd: m.cwd, env: m.env, detached: true, stdio: ["ignore", socket, "ignore"] })
    } catch (error) {
      socket.destroy()
      reply({ id: m.id, error: String(error && error.message || error) })
      return
    }
    child.once("error", (error) => { socket.destroy(); reply({ id: m.id, error: error.message }) })
    child.once("spawn", () => { socket.destroy(); reply({ id: m.id, pid: child.pid }) })
    child.once("exit", (code, signal) => reply({ id: m.id, exit: { code, signal } }))
  }))
})
`

interface Pending {
  pid?: number
  stdout?: Readable
  readonly resolveStart: (started: Started | Lost | undefined) => void
  readonly resolveExit: (exit: Exit) => void
  readonly exited: Promise<Exit>
  settled: boolean
  /** The helper reported the exit (a fast command may exit before its socket is even accepted). */
  exitSeen: boolean
  /** The helper took the command: from then on it may have started it. */
  acked: boolean
}

interface Helper {
  readonly child: ChildProcess.ChildProcess
  readonly server: net.Server
  /** Commands started and not yet exited (or not yet started): while there are any, the helper is ref'ed. */
  readonly pending: Map<string, Pending>
  failed: boolean
}

/** The helper keeps this process alive only while it has commands to start or report on. */
const hold = (current: Helper) => {
  if (current.pending.size > 0) {
    current.child.channel?.ref()
    current.server.ref()
  } else {
    current.child.channel?.unref()
    current.server.unref()
  }
}

let helper: Helper | undefined
/** Set once the helper failed: from then on this process spawns its commands itself. */
let broken = false

/** Whether a process with this pid is still there (a zombie counts as gone). */
const running = (pid: number): boolean => procStat(pid)?.live === true

/** A command whose helper died: its exit is known only as its disappearance (status unknown). */
const watchOrphan = (entry: Pending) => {
  const pid = entry.pid
  if (pid === undefined) return
  const timer = setInterval(() => {
    if (running(pid)) return
    clearInterval(timer)
    entry.resolveExit({ code: null, signal: null })
  }, 50)
}

/**
 * Stops using a helper that failed: later commands are spawned directly. A start still pending is decided by
 * whether the helper acknowledged it: if not, it never started the command and the caller may spawn it; if
 * so, the command may be running (its group is killed when its pid is known) and starting it again could run
 * it twice, so the call fails (`Lost`).
 */
const fail = (current: Helper, reason: string) => {
  if (current.failed) return
  current.failed = true
  if (helper === current) helper = undefined
  broken = true
  if (current.child.exitCode === null && current.child.signalCode === null) current.child.kill()
  for (const entry of current.pending.values()) {
    if (!entry.settled) {
      entry.settled = true
      entry.stdout?.destroy()
      if (!entry.acked) {
        entry.resolveStart(undefined)
        continue
      }
      if (entry.pid !== undefined) {
        try {
          process.kill(-entry.pid, "SIGKILL")
        } catch {
          // Already gone.
        }
      }
      entry.resolveStart({
        _tag: "Lost",
        message: `the process that starts Bash commands ${reason} while starting this one, so it may or may not have ` +
          "run: check before running it again"
      })
    } else if (!entry.exitSeen) {
      watchOrphan(entry)
    }
  }
  current.pending.clear()
  current.server.close()
}

const complete = (current: Helper, id: string, entry: Pending) => {
  if (entry.settled || entry.pid === undefined || entry.stdout === undefined) return
  entry.settled = true
  entry.resolveStart({ _tag: "Started", pid: entry.pid, stdout: entry.stdout, exited: entry.exited })
  // Done with the helper once started and exited: until both, it must keep this process alive.
  if (entry.exitSeen) current.pending.delete(id)
  hold(current)
}

/** Reads the id line a connection starts with, then hands the rest of the stream to the command's caller. */
const accept = (current: Helper, socket: net.Socket) => {
  let head = Buffer.alloc(0)
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk])
    const end = head.indexOf(10)
    if (end === -1) {
      if (head.length > 64) socket.destroy()
      return
    }
    socket.off("data", onData)
    socket.pause()
    const id = head.subarray(0, end).toString("latin1")
    const entry = current.pending.get(id)
    if (entry === undefined || entry.settled) {
      socket.destroy()
      return
    }
    const rest = head.subarray(end + 1)
    if (rest.length > 0) socket.unshift(rest)
    entry.stdout = socket
    complete(current, id, entry)
  }
  socket.on("data", onData)
  socket.once("error", () => socket.destroy())
}

const startHelper = (stateDir: string): Helper | undefined => {
  const socketPath = path.join(stateDir, `spawner-${process.pid}-${crypto.randomUUID().slice(0, 8)}.sock`)
  try {
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 })
    // mkdir leaves an existing directory as it is: one made by someone else (in a shared /tmp), or open to
    // others, would let them replace the socket, read the commands' output and hold their starts forever.
    const stat = fs.lstatSync(stateDir)
    if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o077) !== 0) return undefined
    // Sockets left by processes that died without their exit handler (SIGKILL) go now.
    for (const name of fs.readdirSync(stateDir)) {
      const owner = /^spawner-(\d+)-/.exec(name)
      if (owner !== null && !running(Number(owner[1]))) fs.rmSync(path.join(stateDir, name), { force: true })
    }
  } catch {
    return undefined
  }
  const server = net.createServer()
  const pending = new Map<string, Pending>()
  let child: ChildProcess.ChildProcess
  try {
    child = ChildProcess.spawn(process.execPath, ["-e", HELPER, socketPath], {
      stdio: ["ignore", "ignore", "ignore", "ipc"],
      // Node's own options (a loader, an inspector) are not the helper's business.
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" }
    })
  } catch {
    return undefined
  }
  const current: Helper = { child, server, pending, failed: false }
  // The socket file is this process's: it goes with it.
  process.once("exit", () => fs.rmSync(socketPath, { force: true }))
  server.on("connection", (socket) => accept(current, socket))
  server.once("error", (error) => fail(current, `could not listen (${error.message})`))
  server.listen(socketPath)
  child.on("message", (message: { id: string; ack?: true; pid?: number; error?: string; exit?: Exit }) => {
    const entry = pending.get(message.id)
    if (entry === undefined) return
    if (message.ack === true) {
      entry.acked = true
      return
    }
    if (message.error !== undefined) {
      pending.delete(message.id)
      if (!entry.settled) {
        entry.settled = true
        entry.stdout?.destroy()
        entry.resolveStart(undefined)
      }
    } else if (message.pid !== undefined) {
      entry.pid = message.pid
      complete(current, message.id, entry)
    } else if (message.exit !== undefined) {
      entry.exitSeen = true
      if (entry.settled) pending.delete(message.id)
      entry.resolveExit(message.exit)
    }
    hold(current)
  })
  // Every error, not the first only: sends to a helper that died unnoticed each emit one, and an 'error'
  // without a listener would crash this process (fail is idempotent).
  child.on("error", (error) => fail(current, `failed (${error.message})`))
  // Decided when the channel closes, which Node reports after every message the helper sent has been read:
  // what it acknowledged is then known exactly.
  child.once("disconnect", () => fail(current, "went away"))
  // Neither keeps the agent alive: the helper exits when its channel closes with this process.
  child.unref()
  child.channel?.unref()
  server.unref()
  return current
}

/** Starts the helper ahead of the first command (it takes a Node start, ~50 ms), unless it is off. */
export const warm = (stateDir: string): void => {
  if (broken || helper !== undefined || process.env.TOOLWRIGHT_BASH_SPAWNER === "0") return
  helper = startHelper(stateDir)
  if (helper === undefined) broken = true
}

/**
 * Starts `file args` in a new process group with its stdout on a socket to this process (stderr: none; the
 * command line joins it to stdout). Undefined when the helper cannot do it: the caller spawns the command.
 */
export const start = (options: {
  readonly file: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  readonly stateDir: string
}): Promise<Started | Lost | undefined> => {
  if (broken || process.env.TOOLWRIGHT_BASH_SPAWNER === "0") return Promise.resolve(undefined)
  helper ??= startHelper(options.stateDir)
  const current = helper
  if (current === undefined) {
    broken = true
    return Promise.resolve(undefined)
  }
  return new Promise<Started | Lost | undefined>((resolveStart) => {
    let resolveExit!: (exit: Exit) => void
    const exited = new Promise<Exit>((resolve) => {
      resolveExit = resolve
    })
    const id = crypto.randomUUID()
    current.pending.set(id, { resolveStart, resolveExit, exited, settled: false, exitSeen: false, acked: false })
    hold(current)
    const env: Record<string, string> = {}
    for (const [key, value] of Object.entries(options.env)) if (value !== undefined) env[key] = value
    try {
      current.child.send({ id, file: options.file, args: options.args, cwd: options.cwd, env })
    } catch (error) {
      // Not sent: the command cannot have started; the caller spawns it itself.
      current.pending.delete(id)
      resolveStart(undefined)
      fail(current, `could not be reached (${error instanceof Error ? error.message : String(error)})`)
    }
  })
}
