/**
 * With real processes: interrupting a call closes its scope, and a tool that owns a process group in an
 * acquireRelease scope leaves nothing behind, grandchildren included.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Schema, Scope } from "effect"
import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import * as StreamingToolExecutor from "../src/StreamingToolExecutor.js"
import * as Tool from "../src/Tool.js"
import * as ToolErrors from "../src/ToolErrors.js"
import { collect, context, layerFor } from "./orchestrationFixtures.js"

/** The processes of a process group that are still alive (zombies waiting for a reaper do not count). */
const livingInGroup = (pgid: number): Array<number> =>
  readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return []
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      // Fields after the command name (which may hold spaces) start after the last ")".
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      return Number(pgrp) === pgid && state !== "Z" ? [Number(entry)] : []
    } catch {
      return []
    }
  })

/** Waits (up to 2 s) until the group has at least, or at most, `count` living processes. */
const waitForGroup = (pgid: number, count: number, bound: "at least" | "at most" = "at least") =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const living = livingInGroup(pgid).length
      if (bound === "at least" ? living >= count : living <= count) return
      yield* Effect.sleep("10 millis")
    }
  })

/**
 * Runs `sh -c "sleep 100 & sleep 100"` in its own process group; releasing the scope kills the whole group
 * and waits for the shell to exit.
 */
const makeSleeper = (spawned: Deferred.Deferred<number>) =>
  Tool.make({
    name: "Sleeper",
    description: "starts a shell that backgrounds a sleep and sleeps",
    input: Schema.Struct({}),
    isReadOnly: () => true,
    isConcurrencySafe: () => true,
    call: () =>
      Effect.scoped(Effect.gen(function*() {
        const child = yield* Effect.acquireRelease(
          Effect.sync(() => spawn("sh", ["-c", "sleep 100 & sleep 100"], { detached: true, stdio: "ignore" })),
          (child) =>
            Effect.async<void>((resume) => {
              if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
              child.once("exit", () => resume(Effect.void))
              try {
                if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
              } catch {
                resume(Effect.void)
              }
            }).pipe(
              // SIGKILL is delivered asynchronously: the scope is released once the whole group is gone.
              Effect.zipRight(child.pid === undefined ? Effect.void : waitForGroup(child.pid, 0, "at most"))
            )
        )
        yield* Deferred.succeed(spawned, child.pid ?? -1)
        return yield* Effect.async<string>((resume) => {
          child.once("exit", (code) => resume(Effect.succeed(`exited ${code}`)))
        })
      }))
  })


describe("StreamingToolExecutor with real processes", () => {
  it.live("interrupting a call that runs `sh -c \"sleep 100 & sleep 100\"` leaves no process behind", () =>
    Effect.gen(function*() {
      const spawned = yield* Deferred.make<number>()
      const layer = layerFor([makeSleeper(spawned)])
      yield* Effect.gen(function*() {
        const scope = yield* Scope.make()
        const executor = yield* StreamingToolExecutor.make(context).pipe(Scope.extend(scope))
        const reader = yield* collect(executor.events).pipe(Effect.fork)
        yield* executor.addTool({ type: "tool_use", id: "toolu_sleep", name: "Sleeper", input: {} })
        const pgid = yield* Deferred.await(spawned)
        yield* waitForGroup(pgid, 2)
        assert.isAtLeast(livingInGroup(pgid).length, 2, "the shell and its background sleep run in the group")

        yield* executor.abort
        yield* executor.end
        const events = yield* Fiber.join(reader)
        assert.deepStrictEqual(livingInGroup(pgid), [])
        const [result] = events.flatMap((e) => (e._tag === "ToolResult" ? [e.result] : []))
        assert.deepStrictEqual(result, {
          type: "tool_result",
          tool_use_id: "toolu_sleep",
          content:
            "<tool_use_error>Interrupted by user: Sleeper was stopped before it finished, so its work may be incomplete. Wait for the user to tell you how to proceed.</tool_use_error>",
          is_error: true
        })
        yield* Scope.close(scope, Exit.void)
      }).pipe(Effect.provide(layer))
    }))

  it.live("a cascade from a failing sibling kills the running call's process group", () =>
    Effect.gen(function*() {
      const spawned = yield* Deferred.make<number>()
      // Fails, cascading like Bash, once the sleeper's shell and its background sleep are up.
      const Failer = Tool.make({
        name: "Failer",
        description: "fails once the sleeper runs",
        input: Schema.Struct({ command: Schema.String }),
        cascadeOnError: true,
        isConcurrencySafe: () => true,
        call: () =>
          Deferred.await(spawned).pipe(
            Effect.flatMap((pgid) => waitForGroup(pgid, 2)),
            Effect.zipRight(Effect.fail(new ToolErrors.ToolError({ message: "exit 1" })))
          )
      })
      const layer = layerFor([makeSleeper(spawned), Failer])
      yield* Effect.gen(function*() {
        const scope = yield* Scope.make()
        const executor = yield* StreamingToolExecutor.make(context).pipe(Scope.extend(scope))
        const reader = yield* collect(executor.events).pipe(Effect.fork)
        yield* executor.addTools([
          { type: "tool_use", id: "toolu_sleep", name: "Sleeper", input: {} },
          { type: "tool_use", id: "toolu_fail", name: "Failer", input: { command: "make check" } }
        ])
        const pgid = yield* Deferred.await(spawned)
        yield* executor.end
        const events = yield* Fiber.join(reader)
        assert.deepStrictEqual(livingInGroup(pgid), [])
        assert.deepStrictEqual(events.flatMap((e) => (e._tag === "ToolResult" ? [e.result.content] : [])), [
          "<tool_use_error>Cancelled: parallel tool call Failer(make check) errored</tool_use_error>",
          "<tool_use_error>exit 1</tool_use_error>"
        ])
        yield* Scope.close(scope, Exit.void)
      }).pipe(Effect.provide(layer))
    }))

  it.live("closing the executor's scope kills the process group as well", () =>
    Effect.gen(function*() {
      const spawned = yield* Deferred.make<number>()
      const layer = layerFor([makeSleeper(spawned)])
      const pgid = yield* Effect.gen(function*() {
        const scope = yield* Scope.make()
        const executor = yield* StreamingToolExecutor.make(context).pipe(Scope.extend(scope))
        yield* executor.addTool({ type: "tool_use", id: "toolu_sleep", name: "Sleeper", input: {} })
        const pgid = yield* Deferred.await(spawned)
        yield* waitForGroup(pgid, 2)
        yield* Scope.close(scope, Exit.void)
        return pgid
      }).pipe(Effect.provide(layer))
      assert.deepStrictEqual(livingInGroup(pgid), [])
    }))
})
