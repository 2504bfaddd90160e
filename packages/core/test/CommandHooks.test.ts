import { NodeContext } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Context, Deferred, Duration, Effect, Exit, Fiber, FiberId, Layer, Schema, Scope, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Settings } from "../src/index.js"
import {
  CommandHooks,
  PermissionPrompter,
  StreamingToolExecutor,
  Tool,
  ToolHooks,
  ToolOrchestration,
  ToolRegistry,
  ToolRuntime,
  ToolUseContext
} from "../src/index.js"

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "tw-hooks-")))

/** Writes an executable hook script into the temp dir and returns its path. */
const script = (name: string, body: string): string => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  return file
}

const hook = (event: string, command: string, matcher?: string, timeout = 600): Settings.CommandHook => ({
  event,
  matcher,
  command,
  timeout,
  source: "test"
})

const Echo = Tool.make({
  name: "Echo",
  description: "Echoes",
  input: Schema.Struct({ text: Schema.String }),
  call: ({ text }) => Effect.succeed(`echo: ${text}`)
})

const Fails = Tool.make({
  name: "Fails",
  description: "Always fails",
  input: Schema.Struct({}),
  isReadOnly: () => true,
  call: () => Effect.fail("it broke")
})

/** A tool whose output is data the model reads as text: hooks get the data. */
const Counts = Tool.make({
  name: "Counts",
  description: "Counts",
  input: Schema.Struct({}),
  isReadOnly: () => true,
  call: () => Effect.succeed({ count: 2, items: ["a", "b"], note: undefined }),
  mapToolResult: (output) => `${output.count} items: ${output.items.join(", ")}`
})

/** Output JSON cannot carry as it is (bytes): hooks get what the model got. */
const Bytes = Tool.make({
  name: "Bytes",
  description: "Bytes",
  input: Schema.Struct({}),
  isReadOnly: () => true,
  call: () => Effect.succeed({ data: new Uint8Array([1, 2]) }),
  mapToolResult: (output) => `${output.data.length} bytes`
})

/** A tool that says what its hooks get. */
const Shaped = Tool.make({
  name: "Shaped",
  description: "Shaped",
  input: Schema.Struct({}),
  isReadOnly: () => true,
  call: () => Effect.succeed("done"),
  toHookResponse: (output, content) => ({ output, content, success: true })
})

/** A tool whose hook response cannot be made (it throws, or JSON cannot carry it): its call still succeeds. */
const Unshaped = Tool.make({
  name: "Unshaped",
  description: "Unshaped",
  input: Schema.Struct({}),
  isReadOnly: () => true,
  call: () => Effect.succeed("kept"),
  toHookResponse: () => ({ size: 1n })
})

const Throwing = Tool.make({
  name: "Throwing",
  description: "Throwing",
  input: Schema.Struct({}),
  isReadOnly: () => true,
  call: () => Effect.succeed("kept"),
  toHookResponse: () => {
    throw new Error("no shape for hooks")
  }
})

const context = ToolUseContext.make({
  cwd: dir,
  sessionId: "sess-1",
  permissionContext: { mode: "default", allow: [], ask: [], deny: [], additionalDirectories: [] }
})

const pre = (hooks: ReadonlyArray<Settings.CommandHook>, input: unknown = { text: "hi" }) =>
  Effect.gen(function*() {
    const service = yield* CommandHooks.make({ hooks, projectDir: "/the/project" })
    return yield* service.preToolUse(Echo, input, { ...context, toolUseId: "toolu_9" })
  }).pipe(Effect.provide(NodeContext.layer))

describe("CommandHooks: PreToolUse protocol", () => {
  it.live("stdin carries Claude Code's fields and the project dir variables are set", () =>
    Effect.gen(function*() {
      const out = path.join(dir, "stdin.json")
      const env = path.join(dir, "env.txt")
      yield* pre([hook("PreToolUse", `cat > ${out}; echo "$TOOLWRIGHT_PROJECT_DIR $CLAUDE_PROJECT_DIR" > ${env}`)])
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(out, "utf8")), {
        session_id: "sess-1",
        transcript_path: `${context.projectDir}/sess-1.jsonl`,
        cwd: dir,
        permission_mode: "default",
        hook_event_name: "PreToolUse",
        tool_name: "Echo",
        tool_input: { text: "hi" },
        tool_use_id: "toolu_9"
      })
      assert.strictEqual(fs.readFileSync(env, "utf8"), "/the/project /the/project\n")
    }))

  it.live("exit 0 with JSON: decision, reason, updated input, context", () =>
    Effect.gen(function*() {
      const json = JSON.stringify({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          permissionDecisionReason: "looks fine",
          updatedInput: { text: "rewritten" },
          additionalContext: "note from hook"
        }
      })
      const outcome = yield* pre([hook("PreToolUse", script("allow.sh", `echo '${json}'`))])
      assert.deepStrictEqual(outcome, {
        permissionDecision: "allow",
        reason: "looks fine",
        updatedInput: { text: "rewritten" },
        additionalContext: ["note from hook"]
      })
    }))

  it.live("exit 2 blocks with stderr as the reason; other exits, garbage and bad decisions have no say", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* pre([hook("PreToolUse", script("block.sh", "echo 'no rm here' >&2; exit 2"))]), {
        permissionDecision: "deny",
        reason: "no rm here"
      })
      assert.deepStrictEqual(yield* pre([hook("PreToolUse", script("err.sh", "echo oops >&2; exit 1"))]), {})
      assert.deepStrictEqual(yield* pre([hook("PreToolUse", script("garbage.sh", "echo '{not json'"))]), {})
      assert.deepStrictEqual(
        yield* pre([hook("PreToolUse", script("bad.sh", `echo '{"hookSpecificOutput":{"permissionDecision":"yes"}}'`))]),
        {}
      )
      assert.deepStrictEqual(yield* pre([hook("PreToolUse", "/no/such/hook")]), {})
      assert.deepStrictEqual(yield* pre([hook("PreToolUse", "kill -9 $$")]), {})
    }))

  it.live("a hook past its timeout is killed and has no say", () =>
    Effect.gen(function*() {
      const marker = path.join(dir, "late.txt")
      const outcome = yield* pre([hook("PreToolUse", `sleep 2; echo late > ${marker}; exit 2`, undefined, 0.3)])
      assert.deepStrictEqual(outcome, {})
      yield* Effect.sleep("2500 millis")
      assert.isFalse(fs.existsSync(marker), "the timed-out hook must have been killed")
    }), 15_000)

  it.live("a hook that ignores SIGTERM is still killed at its timeout, with no say", () =>
    Effect.gen(function*() {
      const marker = path.join(dir, "trapped.txt")
      const outcome = yield* pre([
        hook("PreToolUse", `trap '' TERM; sleep 30; echo late > ${marker}; exit 2`, undefined, 0.3)
      ])
      assert.deepStrictEqual(outcome, {})
      assert.isFalse(fs.existsSync(marker))
    }), 15_000)

  it.live("a hook whose background job keeps its output open: what it printed before exiting counts", () =>
    Effect.gen(function*() {
      const pidFile = path.join(dir, "background.pid")
      const deny = JSON.stringify({ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "no" } })
      const outcome = yield* pre([
        hook("PreToolUse", `sleep 30 & echo $! > ${pidFile}; echo '${deny}'`, undefined, 20)
      ])
      assert.deepStrictEqual(outcome, { permissionDecision: "deny", reason: "no" })
      // The job holding the hook's output was killed with the hook's process group.
      const pid = Number(fs.readFileSync(pidFile, "utf8"))
      const alive = () => {
        try {
          return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
        } catch {
          return false
        }
      }
      for (let i = 0; i < 100 && alive(); i++) yield* Effect.sleep("50 millis")
      assert.isFalse(alive(), "the background job must have been killed")
    }), 15_000)

  it.live("a hook's if (Claude Code's filter in rule syntax) runs it only for the calls the rule names", () =>
    Effect.gen(function*() {
      const Shell = Tool.make({
        name: "Shell",
        description: "Runs a line",
        input: Schema.Struct({ command: Schema.String, file: Schema.optional(Schema.String) }),
        ruleSubjects: ({ command, file }) => ({
          specifiers: command.split("&&").map((piece) => piece.trim()),
          paths: file === undefined ? [] : [{ path: file, access: "write" as const }],
          ...(command.includes("$(") ? { opaque: "substitution" } : {})
        }),
        call: () => Effect.succeed("ran")
      })
      const blocking = (condition: string): Settings.CommandHook => ({
        ...hook("PreToolUse", "echo blocked >&2; exit 2", "Shell"),
        if: condition
      })
      const run = (hooks: ReadonlyArray<Settings.CommandHook>, input: unknown) =>
        Effect.flatMap(
          CommandHooks.make({ hooks }),
          (service) => service.preToolUse(Shell, input, context)
        ).pipe(Effect.provide(NodeContext.layer))
      const denied: ToolHooks.PreToolUseOutcome = { permissionDecision: "deny", reason: "blocked" }
      const rm = [blocking("Shell(rm *)")]
      assert.deepStrictEqual(yield* run(rm, { command: "ls -la" }), {})
      assert.deepStrictEqual(yield* run(rm, { command: "rm -rf build" }), denied)
      assert.deepStrictEqual(yield* run(rm, { command: "ls && rm x" }), denied, "any piece of a compound line")
      assert.deepStrictEqual(yield* run(rm, { command: "echo $(ls)" }), denied, "what cannot be analysed runs the hook")
      assert.deepStrictEqual(yield* run([blocking("Other(rm *)")], { command: "rm x" }), {})
      const edits = [blocking("Edit(./secret/**)")]
      assert.deepStrictEqual(yield* run(edits, { command: "ls", file: "secret/key" }), denied)
      assert.deepStrictEqual(yield* run(edits, { command: "ls", file: "public/key" }), {})
      // Asked whether a hook might hear an interruption, the if is taken to match.
      const service = yield* CommandHooks.make({ hooks: [{ ...hook("PostToolUseFailure", "true", "Shell"), if: "Shell(rm *)" }] }).pipe(
        Effect.provide(NodeContext.layer)
      )
      assert.isTrue(service.hearsInterrupts?.(Shell, context))
    }))

  it.live("continue:false stops; the legacy decision field still works", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(
        yield* pre([hook("PreToolUse", `echo '{"continue":false,"stopReason":"enough"}'`)]),
        { stop: { reason: "enough" } }
      )
      assert.deepStrictEqual(
        yield* pre([hook("PreToolUse", `echo '{"decision":"block","reason":"legacy no"}'`)]),
        { permissionDecision: "deny", reason: "legacy no" }
      )
    }))

  it.live("matchers, concurrency, identical commands once, deny > defer > ask > allow", () =>
    Effect.gen(function*() {
      const counter = path.join(dir, "count.txt")
      const decide = (d: string) => `echo '{"hookSpecificOutput":{"permissionDecision":"${d}","permissionDecisionReason":"${d}!"}}'`
      const outcome = yield* pre([
        hook("PreToolUse", decide("allow"), "Echo"),
        hook("PreToolUse", decide("ask"), "Bash|Echo"),
        hook("PreToolUse", decide("deny"), "Write"),
        hook("PreToolUse", decide("defer"), "^Ec.*"),
        hook("PreToolUse", `echo x >> ${counter}`, "*"),
        hook("PreToolUse", `echo x >> ${counter}`, "")
      ])
      assert.deepStrictEqual(outcome, { permissionDecision: "defer", reason: "defer!" })
      assert.strictEqual(fs.readFileSync(counter, "utf8"), "x\n")
      const denied = yield* pre([hook("PreToolUse", decide("allow")), hook("PreToolUse", decide("deny"), ".*")])
      assert.deepStrictEqual(denied, { permissionDecision: "deny", reason: "deny!" })
    }))
})

describe("CommandHooks in the pipeline", () => {
  const runtimeWith = (hooks: ReadonlyArray<Settings.CommandHook>) =>
    ToolRuntime.layer.pipe(
      Layer.provide(Layer.mergeAll(ToolRuntime.defaultStages, CommandHooks.layer({ hooks }))),
      Layer.provide(ToolRegistry.layerTools([Echo, Fails, Counts, Bytes, Shaped, Unshaped, Throwing])),
      Layer.provide(NodeContext.layer)
    )
  const run = (hooks: ReadonlyArray<Settings.CommandHook>, name: string, input: unknown) =>
    Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
      rt.runToolUse({ type: "tool_use", id: "t1", name, input }, context).pipe(Stream.runCollect)).pipe(
        Effect.map((events) => Array.from(events).filter((event) => event._tag === "ToolResult").map((e) => e.result)),
        Effect.provide(runtimeWith(hooks))
      )

  it.live("a hook's allow runs a call that would ask; its rewritten input is validated again", () =>
    Effect.gen(function*() {
      const allow = `echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"text":"new"}}}'`
      assert.deepStrictEqual(yield* run([hook("PreToolUse", allow)], "Echo", { text: "old" }), [
        { type: "tool_result", tool_use_id: "t1", content: "echo: new" }
      ])
      const bad = `echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"nope":1}}}'`
      const [result] = yield* run([hook("PreToolUse", bad)], "Echo", { text: "old" })
      assert.strictEqual(result.is_error, true)
      assert.include(String(result.content), "A PreToolUse hook rewrote the input")
    }))

  it.live("garbage or a crash never counts as allow: the call still asks (and is auto-denied)", () =>
    Effect.gen(function*() {
      const [result] = yield* run([hook("PreToolUse", "echo garbage; exit 1")], "Echo", { text: "x" })
      assert.strictEqual(result.is_error, true)
      assert.include(String(result.content), "Permission to use Echo was not granted")
    }))

  it.live("exit 2 denies with stderr; PostToolUse block and context reach the model", () =>
    Effect.gen(function*() {
      const [denied] = yield* run([hook("PreToolUse", "echo 'Echo is off limits' >&2; exit 2")], "Echo", { text: "x" })
      assert.deepStrictEqual(denied, { type: "tool_result", tool_use_id: "t1", content: "Echo is off limits", is_error: true })
      const allow = hook("PreToolUse", `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`)
      const post = hook(
        "PostToolUse",
        `input=$(cat); case "$input" in *'"tool_response":"echo: x"'*) echo '{"decision":"block","reason":"saw it"}';; esac`
      )
      const [result] = yield* run([allow, post], "Echo", { text: "x" })
      assert.deepStrictEqual(result, {
        type: "tool_result",
        tool_use_id: "t1",
        content: "echo: x\n\nPostToolUse hook blocked: saw it"
      })
      const failure = hook("PostToolUseFailure", `grep -q '"error":"it broke"' && echo 'retry later' >&2 && exit 2`)
      const [failed] = yield* run([failure], "Fails", {})
      assert.deepStrictEqual(failed, {
        type: "tool_result",
        tool_use_id: "t1",
        content: "<tool_use_error>it broke</tool_use_error>\n\nretry later",
        is_error: true
      })
    }))

  it.live("PostToolUse's tool_response is the tool's result as data (Claude Code's shape), not the model's text", () =>
    Effect.gen(function*() {
      const seen = path.join(dir, "post-response.json")
      const allow = hook("PreToolUse", `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`)
      const capture = hook("PostToolUse", `cat > ${seen}`)
      const responseOf = (name: string, input: unknown = {}) =>
        Effect.map(run([allow, capture], name, input), (results) => {
          assert.lengthOf(results, 1)
          return JSON.parse(fs.readFileSync(seen, "utf8")).tool_response
        })
      assert.deepStrictEqual(yield* responseOf("Counts"), { count: 2, items: ["a", "b"] })
      assert.strictEqual(yield* responseOf("Bytes"), "2 bytes")
      assert.deepStrictEqual(yield* responseOf("Shaped"), { output: "done", content: "done", success: true })
      assert.strictEqual(yield* responseOf("Echo", { text: "x" }), "echo: x")
      // A tool whose hook response throws or is no JSON ran all the same: hooks get the model's text.
      for (const name of ["Unshaped", "Throwing"]) {
        assert.deepStrictEqual(yield* run([allow, capture], name, {}), [
          { type: "tool_result", tool_use_id: "t1", content: "kept" }
        ])
        assert.strictEqual(JSON.parse(fs.readFileSync(seen, "utf8")).tool_response, "kept")
      }
    }))

  it.live("an async hook starts with the call's input but is not waited for, and cannot block it", () =>
    Effect.gen(function*() {
      const go = path.join(dir, "async-go")
      const seen = path.join(dir, "async-seen.json")
      // Waits for the test's go-ahead: had the call waited for it, the call would never end.
      const background = {
        ...hook("PreToolUse", `while [ ! -f ${go} ]; do sleep 0.02; done; cat > ${seen}.part; mv ${seen}.part ${seen}; echo no >&2; exit 2`),
        async: true
      }
      const allow = hook("PreToolUse", `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`)
      // All inside the runtime's scope: closing it waits for the hook, which waits for the go-ahead.
      yield* Effect.gen(function*() {
        const runtime = yield* ToolRuntime.ToolRuntime
        const events = yield* runtime.runToolUse({ type: "tool_use", id: "t1", name: "Echo", input: { text: "x" } }, context)
          .pipe(Stream.runCollect)
        assert.deepStrictEqual(Array.from(events).flatMap((event) => event._tag === "ToolResult" ? [event.result] : []), [
          { type: "tool_result", tool_use_id: "t1", content: "echo: x" }
        ])
        assert.isFalse(fs.existsSync(seen))
        fs.writeFileSync(go, "")
        // Written whole, then renamed: once it is there it is complete.
        for (let i = 0; i < 500 && !fs.existsSync(seen); i++) yield* Effect.sleep("20 millis")
      }).pipe(Effect.provide(runtimeWith([allow, background])))
      assert.deepInclude(JSON.parse(fs.readFileSync(seen, "utf8")), { hook_event_name: "PreToolUse", tool_input: { text: "x" } })
    }))

  it.live("async hooks end with their layer: waited for when it closes normally, killed when it is interrupted", () =>
    Effect.gen(function*() {
      const alive = (pid: number) => {
        try {
          process.kill(pid, 0)
          return true
        } catch {
          return false
        }
      }
      const startIn = (scope: Scope.CloseableScope, command: string) =>
        Effect.gen(function*() {
          const hooks = yield* Layer.buildWithScope(CommandHooks.layer({ hooks: [{ ...hook("PreToolUse", command), async: true }] }), scope)
          const service = Context.get(hooks, ToolHooks.ToolHooks)
          assert.deepStrictEqual(yield* service.preToolUse(Echo, { text: "x" }, { ...context, toolUseId: "t" }), {})
        }).pipe(Effect.provide(NodeContext.layer))
      // Interrupted (Ctrl-C): the hook's process is killed with the layer, not left running.
      const pidFile = path.join(dir, "async-pid")
      const interrupted = yield* Scope.make()
      yield* startIn(interrupted, `echo $$ > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile} && exec sleep 30`)
      for (let i = 0; i < 500 && !fs.existsSync(pidFile); i++) yield* Effect.sleep("20 millis")
      const pid = Number(fs.readFileSync(pidFile, "utf8"))
      assert.isTrue(alive(pid))
      yield* Scope.close(interrupted, Exit.interrupt(FiberId.none))
      for (let i = 0; i < 250 && alive(pid); i++) yield* Effect.sleep("20 millis")
      assert.isFalse(alive(pid), "the async hook's process was killed")
      // A normal end waits for it: what it does is done when the layer has closed. It waits for the test's
      // go-ahead, so it cannot have finished before the close (a layer that did not wait would kill it).
      const done = path.join(dir, "async-done")
      const go = path.join(dir, "async-go")
      const normal = yield* Scope.make()
      yield* startIn(normal, `while [ ! -f ${go} ]; do sleep 0.02; done; echo finished > ${done}.tmp && mv ${done}.tmp ${done}`)
      assert.isFalse(fs.existsSync(done))
      fs.writeFileSync(go, "")
      yield* Scope.close(normal, Exit.void)
      assert.strictEqual(fs.readFileSync(done, "utf8"), "finished\n")
    }))

  it.live("a hook's systemMessage reaches the user as a HookMessage event, never the model", () =>
    Effect.gen(function*() {
      const say = (event: string, text: string) =>
        `echo '{"systemMessage":"${text}"${event === "PreToolUse" ? ',"hookSpecificOutput":{"permissionDecision":"allow"}' : ""}}'`
      const events = yield* Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
        rt.runToolUse({ type: "tool_use", id: "t1", name: "Echo", input: { text: "x" } }, context).pipe(
          Stream.runCollect
        )).pipe(
          Effect.provide(runtimeWith([
            hook("PreToolUse", say("PreToolUse", "checked the input")),
            hook("PostToolUse", say("PostToolUse", "  formatted it  ")),
            hook("PostToolUse", `echo '{"systemMessage":""}'`)
          ]))
        )
      assert.deepStrictEqual(Array.from(events).map((event) => event._tag === "ToolResult" ? event.result : event), [
        { _tag: "HookMessage", toolUseId: "t1", toolName: "Echo", hookEventName: "PreToolUse", message: "checked the input" },
        { _tag: "HookMessage", toolUseId: "t1", toolName: "Echo", hookEventName: "PostToolUse", message: "formatted it" },
        { type: "tool_result", tool_use_id: "t1", content: "echo: x" }
      ])
      const denied = yield* Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
        rt.runToolUse({ type: "tool_use", id: "t2", name: "Echo", input: { text: "x" } }, context).pipe(
          Stream.runCollect
        )).pipe(
          Effect.provide(runtimeWith([
            hook("PreToolUse", "echo 'no' >&2; exit 2"),
            hook("PermissionDenied", say("PermissionDenied", "told the team"))
          ]))
        )
      assert.deepStrictEqual(Array.from(denied).map((event) => event._tag === "ToolResult" ? event.result : event), [
        { _tag: "HookMessage", toolUseId: "t2", toolName: "Echo", hookEventName: "PermissionDenied", message: "told the team" },
        { type: "tool_result", tool_use_id: "t2", content: "no", is_error: true }
      ])
    }))

  it.live("PermissionDenied hooks hear why a call was denied and may add context for the model", () =>
    Effect.gen(function*() {
      const seen = path.join(dir, "denied.json")
      const denyHook = hook("PreToolUse", "echo 'Echo is off limits' >&2; exit 2")
      const told = hook(
        "PermissionDenied",
        `cat > ${seen}; echo '{"hookSpecificOutput":{"hookEventName":"PermissionDenied","additionalContext":"Ask the user first."}}'`,
        "Echo"
      )
      const [denied] = yield* run([denyHook, told], "Echo", { text: "x" })
      assert.deepStrictEqual(denied, {
        type: "tool_result",
        tool_use_id: "t1",
        content: "Echo is off limits\n\nAsk the user first.",
        is_error: true
      })
      const payload = JSON.parse(fs.readFileSync(seen, "utf8"))
      assert.strictEqual(payload.hook_event_name, "PermissionDenied")
      assert.strictEqual(payload.tool_name, "Echo")
      assert.deepStrictEqual(payload.tool_input, { text: "x" })
      assert.strictEqual(payload.reason, "Echo is off limits")
      // Nobody can answer the ask: the prompter's denial is a denial too, and a garbage hook adds nothing.
      const [unanswered] = yield* run([hook("PermissionDenied", "echo garbage")], "Echo", { text: "x" })
      assert.strictEqual(unanswered.is_error, true)
      assert.match(String(unanswered.content), /^Permission to use Echo was not granted: /)
      assert.notInclude(String(unanswered.content), "\n\n")
    }))

  it.live("programmatic hooks combine with command hooks", () =>
    Effect.gen(function*() {
      const layer = ToolRuntime.layer.pipe(
        Layer.provide(Layer.mergeAll(
          ToolRuntime.defaultStages,
          CommandHooks.layerWithProgrammatic(
            { hooks: [hook("PreToolUse", `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`)] },
            [{ matcher: "Echo", preToolUse: () => Effect.succeed({ permissionDecision: "deny", reason: "embedder says no" }) }]
          )
        )),
        Layer.provide(ToolRegistry.layerTools([Echo])),
        Layer.provide(NodeContext.layer)
      )
      const events = yield* Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
        rt.runToolUse({ type: "tool_use", id: "t1", name: "Echo", input: { text: "x" } }, context).pipe(
          Stream.runCollect
        )).pipe(Effect.provide(layer))
      const [event] = Array.from(events)
      assert(event._tag === "ToolResult")
      assert.strictEqual(event.result.content, "embedder says no")
      const dying = ToolHooks.fromProgrammatic([{ preToolUse: () => Effect.die("boom") }])
      assert.deepStrictEqual(yield* dying.preToolUse(Echo, {}, context), {})
      const denied = ToolHooks.fromProgrammatic([
        { matcher: "Echo", permissionDenied: (_, __, reason) => Effect.succeed({ additionalContext: [`heard: ${reason}`] }) },
        { matcher: "Other", permissionDenied: () => Effect.succeed({ additionalContext: ["not for Echo"] }) }
      ])
      assert.deepStrictEqual(yield* denied.permissionDenied!(Echo, {}, "no rule", context), {
        additionalContext: ["heard: no rule"]
      })
    }))
})

describe("ToolHooks.hearsInterrupts: a call is watched for interruption only when a hook listens", () => {
  it.effect("no hooks, hooks for other events or other tools: no; a PostToolUseFailure hook for the tool: yes", () =>
    Effect.gen(function*() {
      assert.isFalse(ToolHooks.noop.hearsInterrupts?.(Echo, context))
      const programmatic = ToolHooks.fromProgrammatic([
        { postToolUse: () => Effect.succeed({}) },
        { matcher: "Fails", postToolUseFailure: () => Effect.succeed({}) }
      ])
      assert.isFalse(programmatic.hearsInterrupts?.(Echo, context))
      assert.isTrue(programmatic.hearsInterrupts?.(Fails, context))
      const commands = yield* CommandHooks.make({ hooks: [hook("PostToolUse", "true"), hook("PostToolUseFailure", "true", "Fails")] })
      assert.isFalse(commands.hearsInterrupts?.(Echo, context))
      assert.isTrue(commands.hearsInterrupts?.(Fails, context))
    }).pipe(Effect.provide(NodeContext.layer)))
})

describe("CommandHooks: PostToolUseFailure on an interrupted call", () => {
  /** A tool that says when it has started, then sleeps until it is interrupted. */
  const sleeper = (started: Deferred.Deferred<void>) =>
    Tool.make({
      name: "Sleeps",
      description: "Sleeps",
      input: Schema.Struct({ seconds: Schema.Number }),
      isReadOnly: () => true,
      call: ({ seconds }) =>
        Deferred.succeed(started, undefined).pipe(Effect.zipRight(Effect.sleep(`${seconds} seconds`)), Effect.as("woke up"))
    })

  /** The runtime with these command hooks and a programmatic one recording the flag it was given. */
  const runtimeWith = (
    hooks: ReadonlyArray<Settings.CommandHook>,
    started: Deferred.Deferred<void>,
    heard: Array<string>
  ) =>
    ToolRuntime.layer.pipe(
      Layer.provide(Layer.mergeAll(
        ToolRuntime.defaultStages,
        CommandHooks.layerWithProgrammatic({ hooks }, [{
          postToolUseFailure: (tool, _input, error, _context, _ms, isInterrupt) =>
            Effect.as(Effect.sync(() => heard.push(`${tool.name} ${isInterrupt}: ${error}`)), {})
        }])
      )),
      Layer.provide(ToolRegistry.layerTools([sleeper(started), Fails])),
      Layer.provide(NodeContext.layer)
    )

  /** Runs Sleeps, interrupts it once it has started; the call's Exit and how long the interruption took. */
  const interrupted = (hooks: ReadonlyArray<Settings.CommandHook>, heard: Array<string> = []) =>
    Effect.gen(function*() {
      const started = yield* Deferred.make<void>()
      return yield* Effect.gen(function*() {
        const rt = yield* ToolRuntime.ToolRuntime
        const fiber = yield* Effect.fork(
          rt.execute({ type: "tool_use", id: "t1", name: "Sleeps", input: { seconds: 30 } }, context, () => Effect.void)
        )
        yield* Deferred.await(started)
        const before = Date.now()
        const exit = yield* Fiber.interrupt(fiber)
        return { exit, ms: Date.now() - before }
      }).pipe(Effect.provide(runtimeWith(hooks, started, heard)))
    })

  const payloadOf = (file: string) => {
    const { duration_ms, ...rest } = JSON.parse(fs.readFileSync(file, "utf8"))
    assert.strictEqual(typeof duration_ms, "number")
    return rest
  }

  /** Everything a PostToolUseFailure hook reads on stdin but `duration_ms`. */
  const failurePayload = (
    toolName: string,
    toolInput: unknown,
    toolUseId: string,
    error: string,
    isInterrupt: boolean
  ) => ({
    session_id: "sess-1",
    transcript_path: `${context.projectDir}/sess-1.jsonl`,
    cwd: dir,
    permission_mode: "default",
    hook_event_name: "PostToolUseFailure",
    tool_name: toolName,
    tool_input: toolInput,
    tool_use_id: toolUseId,
    error,
    is_interrupt: isInterrupt
  })

  it.live("an interrupted call runs PostToolUseFailure hooks with is_interrupt true, and still ends interrupted", () =>
    Effect.gen(function*() {
      const out = path.join(dir, "interrupted.json")
      const heard: Array<string> = []
      const { exit } = yield* interrupted([hook("PostToolUseFailure", `cat > ${out}`, "Sleeps")], heard)
      assert.isTrue(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause))
      assert.deepStrictEqual(
        payloadOf(out),
        failurePayload("Sleeps", { seconds: 30 }, "t1", "Sleeps was interrupted before it finished.", true)
      )
      assert.deepStrictEqual(heard, ["Sleeps true: Sleeps was interrupted before it finished."])
    }))

  it.live("an ordinary failure gets is_interrupt false", () =>
    Effect.gen(function*() {
      const out = path.join(dir, "failed.json")
      const heard: Array<string> = []
      const started = yield* Deferred.make<void>()
      const result = yield* Effect.flatMap(ToolRuntime.ToolRuntime, (rt) =>
        rt.execute({ type: "tool_use", id: "t2", name: "Fails", input: {} }, context, () => Effect.void)).pipe(
          Effect.provide(runtimeWith([hook("PostToolUseFailure", `cat > ${out}`)], started, heard))
        )
      assert.deepStrictEqual(result.result, {
        type: "tool_result",
        tool_use_id: "t2",
        content: "<tool_use_error>it broke</tool_use_error>",
        is_error: true
      })
      assert.deepStrictEqual(payloadOf(out), failurePayload("Fails", {}, "t2", "it broke", false))
      assert.deepStrictEqual(heard, ["Fails false: it broke"])
    }))

  it.live(`a hook that hangs holds the interruption up at most ${Duration.format(ToolRuntime.INTERRUPT_HOOKS_TIMEOUT)}`, () =>
    Effect.gen(function*() {
      const heard: Array<string> = []
      const { exit, ms } = yield* interrupted([hook("PostToolUseFailure", "sleep 60")], heard)
      assert.isTrue(Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause))
      // The cap is 5 s; the hook's own timeout (600 s) and its sleep (60 s) are far beyond the bound.
      assert.isAtLeast(ms, 4_000)
      assert.isBelow(ms, 20_000)
      assert.deepStrictEqual(heard, ["Sleeps true: Sleeps was interrupted before it finished."])
    }), 40_000)

  it.live("a user abort in the streaming executor: the hook hears it and the result text is unchanged", () =>
    Effect.gen(function*() {
      const out = path.join(dir, "aborted.json")
      const started = yield* Deferred.make<void>()
      const layer = ToolOrchestration.layerWith({}).pipe(
        Layer.provide(runtimeWith([hook("PostToolUseFailure", `cat > ${out}`)], started, []))
      )
      const results = yield* Effect.scoped(Effect.gen(function*() {
        const executor = yield* StreamingToolExecutor.make(context)
        const reader = yield* Effect.fork(Stream.runCollect(executor.events))
        yield* executor.addTool({ type: "tool_use", id: "t3", name: "Sleeps", input: { seconds: 30 } })
        yield* Deferred.await(started)
        yield* executor.abort
        yield* executor.end
        const events = Array.from(yield* Fiber.join(reader))
        return events.flatMap((event) => event._tag === "ToolResult" ? [event.result] : [])
      })).pipe(Effect.provide(layer))
      assert.deepStrictEqual(results, [{
        type: "tool_result",
        tool_use_id: "t3",
        content:
          "<tool_use_error>Interrupted by user: Sleeps was stopped before it finished, so its work may be incomplete. Wait for the user to tell you how to proceed.</tool_use_error>",
        is_error: true
      }])
      assert.deepStrictEqual(
        payloadOf(out),
        failurePayload("Sleeps", { seconds: 30 }, "t3", "Sleeps was interrupted before it finished.", true)
      )
    }))
})

describe("CommandHooks: PermissionRequest", () => {
  const ask = (hooks: ReadonlyArray<Settings.CommandHook>) =>
    Effect.gen(function*() {
      let innerAsked = 0
      const inner: PermissionPrompter.Service = {
        ask: () => Effect.sync(() => (innerAsked++, { behavior: "deny" as const, message: "inner said no" }))
      }
      const prompter = yield* CommandHooks.makePermissionRequest({}, inner)
      const answer = yield* prompter.ask({
        tool: Echo,
        input: { text: "x" },
        context: { ...context, commandHooks: hooks },
        message: "Echo needs permission",
        suggestions: ["Echo"]
      })
      return { answer, innerAsked }
    }).pipe(Effect.provide(NodeContext.layer))

  it.live("permission_suggestions are Claude Code's permission updates, rules split into toolName and ruleContent", () =>
    Effect.gen(function*() {
      const out = path.join(dir, "permission-request.json")
      const prompter = yield* CommandHooks.makePermissionRequest({}, { ask: () => Effect.succeed({ behavior: "deny", message: "no" }) })
      yield* prompter.ask({
        tool: Echo,
        input: { text: "x" },
        context: { ...context, commandHooks: [hook("PermissionRequest", `cat > ${out}`)] },
        message: "Echo needs permission",
        suggestions: ["Echo(npm run test:*)", "Read(./src/**)", "Echo"]
      })
      assert.deepStrictEqual(JSON.parse(fs.readFileSync(out, "utf8")).permission_suggestions, [{
        type: "addRules",
        rules: [
          { toolName: "Echo", ruleContent: "npm run test:*" },
          { toolName: "Read", ruleContent: "./src/**" },
          { toolName: "Echo" }
        ],
        behavior: "allow",
        destination: "localSettings"
      }])
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("an allowing hook's updatedPermissions: addRules allow rules for the session or the local settings", () =>
    Effect.gen(function*() {
      const updates = [
        { type: "addRules", rules: [{ toolName: "Echo", ruleContent: "x" }], behavior: "allow", destination: "session" },
        { type: "addRules", rules: [{ toolName: "Read" }], behavior: "allow", destination: "localSettings" },
        { type: "addRules", rules: [{ toolName: "Echo" }], behavior: "allow", destination: "projectSettings" },
        { type: "addRules", rules: [{ toolName: "bash", ruleContent: "ls" }], behavior: "allow", destination: "session" },
        { type: "setMode", mode: "acceptEdits", destination: "session" }
      ]
      const allow = `echo '${
        JSON.stringify({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow", updatedPermissions: updates } } })
      }'`
      assert.deepStrictEqual(yield* ask([hook("PermissionRequest", allow)]), {
        answer: { behavior: "allow", rules: ["Read"], sessionRules: ["Echo(x)", "Echo"] },
        innerAsked: 0
      })
    }))

  it.live("rules a hook added for the session answer the next ask: the hook is not run again", () =>
    Effect.gen(function*() {
      const count = path.join(dir, "permission-request-count")
      const allow = `echo x >> ${count}; echo '${
        JSON.stringify({
          hookSpecificOutput: {
            hookEventName: "PermissionRequest",
            decision: {
              behavior: "allow",
              updatedPermissions: [{ type: "addRules", rules: [{ toolName: "Echo" }], behavior: "allow", destination: "session" }]
            }
          }
        })
      }'`
      const session = { ...context, commandHooks: [hook("PermissionRequest", allow)] }
      const results = yield* Effect.gen(function*() {
        const runtime = yield* ToolRuntime.ToolRuntime
        const one = (id: string) =>
          Effect.map(
            runtime.runToolUse({ type: "tool_use", id, name: "Echo", input: { text: id } }, session).pipe(Stream.runCollect),
            (events) => Array.from(events).flatMap((event) => event._tag === "ToolResult" ? [event.result.content] : [])
          )
        return [yield* one("a"), yield* one("b")]
      }).pipe(
        Effect.provide(
          ToolRuntime.layer.pipe(
            Layer.provide(Layer.mergeAll(
              ToolRuntime.defaultStages,
              CommandHooks.layerPermissionRequest.pipe(Layer.provide(PermissionPrompter.layerAutoDeny))
            )),
            Layer.provide(ToolRegistry.layerTools([Echo])),
            Layer.provide(NodeContext.layer)
          )
        )
      )
      assert.deepStrictEqual(results, [["echo: a"], ["echo: b"]])
      assert.strictEqual(fs.readFileSync(count, "utf8"), "x\n")
    }))

  it.live("a hook answers for the user; deny wins; nothing said falls through to the prompter", () =>
    Effect.gen(function*() {
      const allow = `grep -q '"toolName":"Echo"' && echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'`
      assert.deepStrictEqual(yield* ask([hook("PermissionRequest", allow)]), { answer: { behavior: "allow" }, innerAsked: 0 })
      const deny = `echo '{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"not today"}}}'`
      assert.deepStrictEqual(yield* ask([hook("PermissionRequest", allow), hook("PermissionRequest", deny)]), {
        answer: { behavior: "deny", message: "not today" },
        innerAsked: 0
      })
      assert.deepStrictEqual(yield* ask([hook("PermissionRequest", "echo nothing to say")]), {
        answer: { behavior: "deny", message: "inner said no" },
        innerAsked: 1
      })
      assert.deepStrictEqual(yield* ask([hook("PermissionRequest", "echo nope >&2; exit 2", "Bash")]), {
        answer: { behavior: "deny", message: "inner said no" },
        innerAsked: 1
      })
    }))
})
