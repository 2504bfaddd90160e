/**
 * Background shell tasks: a command started with `run_in_background` runs in its own process group with
 * its output written straight to a file by the kernel, so it costs this process nothing while it runs.
 * `read` returns what was written since the last read (optionally waiting for the task to finish), `stop`
 * kills the group, and closing the manager's scope (the runtime ends) kills every task still running.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { StringDecoder } from "node:string_decoder"
import { Context, Deferred, Duration, Effect, ExecutionStrategy, Exit, Layer, Schema, Scope } from "effect"
import { truncateMiddle } from "../bash/OutputBuffer.js"
import * as ShellProcess from "../bash/ShellProcess.js"

export type TaskStatus = "running" | "completed" | "failed" | "killed"

/** What the tools show about a task. */
export interface TaskInfo {
  readonly id: string
  readonly sessionId: string
  readonly command: string
  readonly description: string | undefined
  readonly outputFile: string
  readonly status: TaskStatus
  /** The exit code once the task ended on its own (128 + signal when a signal ended it). */
  readonly exitCode: number | undefined
  readonly startedAt: number
}

/** New output of a task since the previous read, with its status after the read. */
export interface TaskRead {
  readonly task: TaskInfo
  readonly output: string
  /** True when `block` waited the whole timeout and the task was still running. */
  readonly timedOut: boolean
}

export class TaskNotFound extends Schema.TaggedError<TaskNotFound>("@toolwright/tools-builtin/TaskNotFound")(
  "TaskNotFound",
  { taskId: Schema.String, message: Schema.String }
) {}

export class TaskNotRunning extends Schema.TaggedError<TaskNotRunning>("@toolwright/tools-builtin/TaskNotRunning")(
  "TaskNotRunning",
  { taskId: Schema.String, message: Schema.String }
) {}

export class TaskStartError extends Schema.TaggedError<TaskStartError>("@toolwright/tools-builtin/TaskStartError")(
  "TaskStartError",
  { message: Schema.String }
) {}

export interface StartOptions<E = never> {
  readonly sessionId: string
  readonly command: string
  readonly description: string | undefined
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
  readonly graceMs: number
  /** Wraps the command line to run (the sandbox). */
  readonly wrap?: ((script: string) => Effect.Effect<string, E>) | undefined
}

/** A running foreground command handed over after its timeout (see `ShellProcess.Detach`). */
export interface AdoptOptions {
  readonly sessionId: string
  readonly command: string
  readonly description: string | undefined
  readonly handoff: ShellProcess.Handoff
}

export interface Service {
  /** The scope processes that may be adopted must be started in: it outlives every call. */
  readonly scope: Scope.Scope
  /**
   * Takes over a running command: a task whose output file starts with the output so far; the answer is
   * the task and the descriptor the rest of the output is to be written to.
   */
  readonly adopt: (options: AdoptOptions) => Effect.Effect<{ readonly task: TaskInfo; readonly fd: number }>
  readonly start: <E = never>(options: StartOptions<E>) => Effect.Effect<TaskInfo, TaskStartError | E>
  /**
   * The output written since the last read (cut in the middle past `maxChars`). With `block`, waits up
   * to `timeoutMs` for the task to end first. Tasks of other sessions are not found.
   */
  readonly read: (
    sessionId: string,
    taskId: string,
    options: { readonly block: boolean; readonly timeoutMs: number; readonly maxChars: number }
  ) => Effect.Effect<TaskRead, TaskNotFound>
  /** Kills the task's process group (SIGTERM, then SIGKILL after the grace period). */
  readonly stop: (sessionId: string, taskId: string) => Effect.Effect<TaskInfo, TaskNotFound | TaskNotRunning>
  /** The session's tasks, oldest first. */
  readonly list: (sessionId: string) => Effect.Effect<ReadonlyArray<TaskInfo>>
}

export class TaskManager extends Context.Tag("@toolwright/tools-builtin/TaskManager")<TaskManager, Service>() {}

interface Entry {
  info: TaskInfo
  readonly scope: Scope.CloseableScope
  readonly done: Deferred.Deferred<void>
  decoder: StringDecoder
  offset: number
}

const newId = (): string => `b${Math.random().toString(36).slice(2, 9).padEnd(7, "0")}`

export const make: Effect.Effect<Service, never, Scope.Scope> = Effect.gen(function*() {
  const root = yield* Effect.scope
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "toolwright-tasks-"))),
    (created) => Effect.sync(() => fs.rmSync(created, { recursive: true, force: true }))
  )
  const tasks = new Map<string, Entry>()

  const find = (sessionId: string, taskId: string) => {
    const entry = tasks.get(taskId)
    if (entry !== undefined && entry.info.sessionId === sessionId) return Effect.succeed(entry)
    const known = [...tasks.values()].filter((e) => e.info.sessionId === sessionId).map((e) => e.info.id)
    return Effect.fail(
      new TaskNotFound({
        taskId,
        message: `No task found with ID: ${taskId}. ${
          known.length === 0 ? "This session has no background tasks." : `This session's tasks: ${known.join(", ")}.`
        }`
      })
    )
  }

  const start = <E>(options: StartOptions<E>) =>
    Effect.gen(function*() {
      let id = newId()
      while (tasks.has(id)) id = newId()
      const outputFile = path.join(dir, `${id}.output`)
      const scope = yield* Scope.fork(root, ExecutionStrategy.sequential)
      const proc = yield* Effect.acquireUseRelease(
        Effect.sync(() => fs.openSync(outputFile, "w", 0o600)),
        (fd) =>
          ShellProcess.spawn({
            command: options.command,
            cwd: options.cwd,
            env: options.env,
            graceMs: options.graceMs,
            wrap: options.wrap,
            // A background task never moves the session's shell.
            trackCwd: false,
            output: { _tag: "File", fd }
          }).pipe(Scope.extend(scope)),
        // The child has its own copy of the descriptor; ours would only keep the file open.
        (fd) => Effect.sync(() => fs.closeSync(fd))
      ).pipe(
        Effect.tapError(() => Scope.close(scope, Exit.void)),
        Effect.catchIf(
          (error): error is ShellProcess.SpawnError => error instanceof ShellProcess.SpawnError,
          (error) =>
            Effect.fail(
              new TaskStartError({
                message: `Could not start the background command in ${options.cwd}: ${error.message}`
              })
            )
        )
      )
      return yield* register(id, outputFile, options, scope, proc.exit)
    })

  /** Records a running task and watches its exit. */
  const register = (
    id: string,
    outputFile: string,
    options: { readonly sessionId: string; readonly command: string; readonly description: string | undefined },
    scope: Scope.CloseableScope,
    exit: Effect.Effect<ShellProcess.ExitStatus>
  ) =>
    Effect.gen(function*() {
      const done = yield* Deferred.make<void>()
      const entry: Entry = {
        info: {
          id,
          sessionId: options.sessionId,
          command: options.command,
          description: options.description,
          outputFile,
          status: "running",
          exitCode: undefined,
          startedAt: Date.now()
        },
        scope,
        done,
        decoder: new StringDecoder("utf8"),
        offset: 0
      }
      tasks.set(id, entry)
      yield* exit.pipe(
        Effect.flatMap((status) =>
          Effect.sync(() => {
            if (entry.info.status !== "running") return
            const exitCode = ShellProcess.exitCodeOf(status)
            entry.info = { ...entry.info, status: exitCode === 0 ? "completed" : "failed", exitCode }
          })
        ),
        Effect.ensuring(Deferred.succeed(done, undefined)),
        Effect.forkIn(root)
      )
      return entry.info
    })

  const readNew = (entry: Entry, maxChars: number): string => {
    let size: number
    try {
      size = fs.statSync(entry.info.outputFile).size
    } catch {
      return ""
    }
    if (size <= entry.offset) return ""
    // Only the last part a reader can see is read: a task that printed gigabytes is not loaded whole.
    const limit = maxChars * 4
    const skipped = Math.max(0, size - entry.offset - limit)
    const buffer = Buffer.alloc(size - entry.offset - skipped)
    const fd = fs.openSync(entry.info.outputFile, "r")
    try {
      fs.readSync(fd, buffer, 0, buffer.length, entry.offset + skipped)
    } finally {
      fs.closeSync(fd)
    }
    entry.offset = size
    // Past a skip, what is shown starts at a line (not mid-line, mid-character), and the decoder starts afresh:
    // a character the last read left open was cut off with the skipped bytes.
    const newline = skipped > 0 ? buffer.indexOf(10) : -1
    const start = newline === -1 || newline === buffer.length - 1 ? 0 : newline + 1
    if (skipped > 0) entry.decoder = new StringDecoder("utf8")
    const text = entry.decoder.write(start === 0 ? buffer : buffer.subarray(start))
    const note = skipped > 0
      ? `[${skipped + start} earlier bytes not shown; the whole output is in ${entry.info.outputFile}]\n`
      : ""
    return note + truncateMiddle(text, maxChars)
  }

  const adopt = (options: AdoptOptions) =>
    Effect.gen(function*() {
      let id = newId()
      while (tasks.has(id)) id = newId()
      const outputFile = path.join(dir, `${id}.output`)
      const fd = yield* Effect.sync(() => {
        const opened = fs.openSync(outputFile, "w", 0o600)
        if (options.handoff.output !== "") fs.writeSync(opened, options.handoff.output)
        return opened
      })
      const task = yield* register(id, outputFile, options, options.handoff.scope, options.handoff.exit)
      return { task, fd }
    })

  const service: Service = {
    scope: root,
    adopt,
    start,
    read: (sessionId, taskId, options) =>
      Effect.gen(function*() {
        const entry = yield* find(sessionId, taskId)
        let timedOut = false
        if (options.block && entry.info.status === "running") {
          const finished = yield* Deferred.await(entry.done).pipe(
            Effect.timeoutOption(Duration.millis(options.timeoutMs))
          )
          timedOut = finished._tag === "None"
        }
        const output = readNew(entry, options.maxChars)
        return { task: entry.info, output, timedOut }
      }),
    stop: (sessionId, taskId) =>
      Effect.gen(function*() {
        const entry = yield* find(sessionId, taskId)
        if (entry.info.status !== "running") {
          return yield* Effect.fail(
            new TaskNotRunning({
              taskId,
              message: `Task ${taskId} is not running (status: ${entry.info.status}${
                entry.info.exitCode === undefined ? "" : `, exit code ${entry.info.exitCode}`
              }).`
            })
          )
        }
        entry.info = { ...entry.info, status: "killed" }
        yield* Scope.close(entry.scope, Exit.void)
        yield* Deferred.await(entry.done)
        return entry.info
      }),
    list: (sessionId) =>
      Effect.sync(() => [...tasks.values()].filter((e) => e.info.sessionId === sessionId).map((e) => e.info))
  }
  return service
})

/** The runtime's task manager; closing it kills every task still running and removes their output files. */
export const layer: Layer.Layer<TaskManager> = Layer.scoped(TaskManager, make)
