/**
 * `toolwright exec` in-process: the loop's Effect with lines fed from a mailbox and output collected,
 * over fake tools whose calls wait on latches the test opens.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Permission,
  PermissionPrompter,
  Tool,
  ToolOrchestration,
  ToolRegistry,
  ToolProgress,
  ToolRuntime,
  ToolUseContext
} from "@toolwright/core"
import { Deferred, Duration, Effect, FastCheck, Fiber, Layer, Mailbox, Schema } from "effect"
import { Writable } from "node:stream"
import * as ExecCommand from "../src/commands/ExecCommand.js"
import * as JsonLinesElicitation from "../src/JsonLinesElicitation.js"
import * as JsonLinesPrompter from "../src/JsonLinesPrompter.js"

type Line = Record<string, unknown>

const makeHarness = (
  mode: Permission.PermissionMode = "default",
  options: { readonly cascade?: ToolOrchestration.CascadePolicy } = {},
  /** Stands for a PermissionRequest hook that looks at the ask, takes its time and leaves it to the peer. */
  askDelay?: Duration.DurationInput
) =>
  Effect.gen(function*() {
    const latches = new Map<string, Deferred.Deferred<void>>()
    const latch = (key: string) =>
      Effect.gen(function*() {
        const existing = latches.get(key)
        if (existing) return existing
        const created = yield* Deferred.make<void>()
        latches.set(key, created)
        return created
      })
    const Input = Schema.Struct({ key: Schema.String })
    const waitFor = ({ key }: { key: string }) =>
      Effect.flatMap(latch(key), Deferred.await).pipe(Effect.as(`${key} done`))
    const fail = ({ key }: { key: string }) =>
      Effect.flatMap(latch(key), Deferred.await).pipe(Effect.zipRight(Effect.fail(`${key} failed`)))
    const tools = [
      Tool.make({ name: "Look", description: "reads", input: Input, isReadOnly: () => true, isConcurrencySafe: () => true, call: waitFor }),
      Tool.make({ name: "Change", description: "writes", input: Input, call: waitFor }),
      Tool.make({
        name: "Talk",
        description: "reports progress",
        input: Input,
        isReadOnly: () => true,
        call: (input) => Effect.zipRight(ToolProgress.report({ step: 1, of: 2 }), waitFor(input))
      }),
      Tool.make({
        name: "Shell",
        description: "fails, cascading",
        input: Input,
        cascadeOnError: true,
        isConcurrencySafe: () => true,
        call: fail
      })
    ]
    const { prompter, service } = yield* JsonLinesPrompter.make
    const layer = ToolOrchestration.layerWith({}).pipe(
      Layer.provideMerge(ToolRuntime.layer),
      Layer.provide(Layer.merge(
        ToolRuntime.defaultStages,
        Layer.succeed(PermissionPrompter.PermissionPrompter, {
          ask: (request) =>
            askDelay === undefined ? prompter.ask(request) : Effect.zipRight(Effect.sleep(askDelay), prompter.ask(request))
        })
      )),
      Layer.provide(ToolRegistry.layerTools(tools)),
      Layer.merge(Layer.succeed(JsonLinesPrompter.JsonLinesPrompter, service)),
      Layer.merge(Layer.succeed(JsonLinesElicitation.JsonLinesElicitation, (yield* JsonLinesElicitation.make).service))
    )
    const input = yield* Mailbox.make<string>()
    const output: Array<Line> = []
    const context = ToolUseContext.make({
      cwd: "/tmp",
      sessionId: "session-1",
      permissionContext: Permission.emptyPermissionContext(mode)
    })
    const fiber = yield* ExecCommand.run(context, {
      lines: Mailbox.toStream(input),
      write: (line) => Effect.sync(() => void output.push(JSON.parse(line) as Line))
    }, options).pipe(Effect.provide(layer), Effect.fork)

    const send = (...lines: Array<unknown>) =>
      Effect.sync(() => lines.forEach((line) => input.unsafeOffer(typeof line === "string" ? line : JSON.stringify(line))))
    /** Waits (live) until an output line satisfies `predicate`, and returns it. */
    const until = (predicate: (line: Line) => boolean) =>
      Effect.gen(function*() {
        for (let i = 0; i < 500; i++) {
          const found = output.find(predicate)
          if (found) return found
          yield* Effect.sleep("2 millis")
        }
        return assert.fail(`no such output line; got ${JSON.stringify(output)}`)
      })
    const open = (key: string) => Effect.flatMap(latch(key), (d) => Deferred.succeed(d, undefined))
    return { input, output, fiber, send, until, open }
  })

const toolUse = (id: string, name: string, key: string) => ({ type: "tool_use", id, name, input: { key } })
const results = (output: ReadonlyArray<Line>) => output.filter((line) => line.type === "tool_result")

describe("toolwright exec (in-process)", () => {
  it.live("ready first, bad lines answered by number, results with durations, EOF ends the run", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness()
      yield* h.send(
        toolUse("a", "Look", "a"),
        "",
        "{not json",
        { type: "nope" },
        { type: "tool_use", name: "Look", input: {} },
        { hello: 1 },
        toolUse("a", "Look", "again"),
        [1, 2]
      )
      yield* h.open("a")
      yield* h.input.end
      yield* Fiber.join(h.fiber)
      assert.deepStrictEqual(h.output[0], { type: "ready", session_id: "session-1", cwd: "/tmp", permission_mode: "default" })
      const errors = h.output.filter((line) => line.type === "error")
      assert.deepStrictEqual(errors.map((e) => e.line), [3, 4, 5, 6, 7, 8])
      assert.match(String(errors[0].message), /^Line 3: it is not valid JSON \(.+\); send one JSON object per line\.$/)
      assert.strictEqual(
        errors[1].message,
        "Line 4: its type \"nope\" is unknown; expected a tool_use block, an assistant message ({\"role\":\"assistant\",\"content\":[...]}), a permission_response, an elicitation_response or {\"type\":\"abort\"}."
      )
      assert.strictEqual(
        errors[2].message,
        "Line 5: the tool_use has no string `id` (every call needs one, to match its result)."
      )
      assert.strictEqual(
        errors[4].message,
        "Line 7: tool_use id \"a\" was already used in this session; give every call its own id."
      )
      const [result] = results(h.output)
      assert.deepStrictEqual({ ...result, duration_ms: typeof result.duration_ms }, {
        type: "tool_result",
        tool_use_id: "a",
        content: "a done",
        is_error: false,
        duration_ms: "number"
      })
    }))

  it.live("progress lines come out while the call runs, before its result", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness()
      yield* h.send(toolUse("t", "Talk", "t"))
      const progress = yield* h.until((line) => line.type === "progress")
      assert.deepStrictEqual({ ...progress, elapsed_ms: typeof progress.elapsed_ms }, {
        type: "progress",
        tool_use_id: "t",
        tool_name: "Talk",
        data: { step: 1, of: 2 },
        elapsed_ms: "number"
      })
      assert.deepStrictEqual(results(h.output), [])
      yield* h.open("t")
      yield* h.input.end
      yield* Fiber.join(h.fiber)
      assert.deepStrictEqual(h.output.map((line) => line.type), ["ready", "progress", "tool_result"])
    }))

  it.live("an assistant message is one batch: results in call order whatever order the calls finish in", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness("bypassPermissions")
      yield* h.send({
        role: "assistant",
        content: [
          { type: "text", text: "Reading two files, then writing." },
          toolUse("r1", "Look", "r1"),
          toolUse("r2", "Look", "r2"),
          toolUse("w", "Change", "w"),
          { type: "tool_use", name: "Look" }
        ]
      })
      yield* h.open("r2")
      yield* h.open("w")
      yield* Effect.sleep("20 millis")
      assert.deepStrictEqual(results(h.output), [])
      yield* h.open("r1")
      yield* h.input.end
      yield* Fiber.join(h.fiber)
      assert.deepStrictEqual(results(h.output).map((r) => r.tool_use_id), ["r1", "r2", "w"])
      const [error] = h.output.filter((line) => line.type === "error")
      assert.strictEqual(
        error.message,
        "Line 1: the tool_use in content[4] has no string `id` (every call needs one, to match its result); it was skipped."
      )
    }))

  it.live("permission_request out, permission_response in: allow runs the call, deny passes the user's words on", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness()
      yield* h.send(toolUse("w1", "Change", "w1"))
      const request = yield* h.until((line) => line.type === "permission_request")
      // The wording of `message` is the permission policy's.
      assert.deepStrictEqual({ ...request, message: typeof request.message }, {
        type: "permission_request",
        tool_use_id: "w1",
        tool_name: "Change",
        input: { key: "w1" },
        message: "string",
        suggestions: ["Change"]
      })
      yield* h.open("w1")
      yield* h.send({ type: "permission_response", tool_use_id: "w1", behavior: "allow" })
      yield* h.until((line) => line.type === "tool_result" && line.tool_use_id === "w1")

      yield* h.send(toolUse("w2", "Change", "w2"))
      yield* h.until((line) => line.type === "permission_request" && line.tool_use_id === "w2")
      yield* h.send(
        { type: "permission_response", tool_use_id: "w2", behavior: "deny", message: "use the staging copy" },
        { type: "permission_response", tool_use_id: "zzz", behavior: "allow" },
        { type: "permission_response", tool_use_id: "w2", behavior: "maybe" }
      )
      yield* h.until((line) => line.type === "tool_result" && line.tool_use_id === "w2")

      // "Allow always": the rule goes to the policy, and the next call of the tool does not ask.
      yield* h.send(toolUse("w3", "Change", "w3"))
      yield* h.until((line) => line.type === "permission_request" && line.tool_use_id === "w3")
      yield* h.open("w3")
      yield* h.open("w4")
      yield* h.send({ type: "permission_response", tool_use_id: "w3", behavior: "allow", rule: "Change" })
      yield* h.until((line) => line.type === "tool_result" && line.tool_use_id === "w3")
      yield* h.send(toolUse("w4", "Change", "w4"))
      yield* h.input.end
      yield* Fiber.join(h.fiber)
      assert.deepStrictEqual(results(h.output).map((r) => [r.tool_use_id, r.content, r.is_error]), [
        ["w1", "w1 done", false],
        ["w2", JsonLinesPrompter.REJECT_MESSAGE_WITH_REASON_PREFIX + "use the staging copy", true],
        ["w3", "w3 done", false],
        ["w4", "w4 done", false]
      ])
      assert.deepStrictEqual(
        h.output.filter((line) => line.type === "permission_request").map((line) => line.tool_use_id),
        ["w1", "w2", "w3"]
      )
      assert.deepStrictEqual(h.output.filter((line) => line.type === "error").map((e) => e.message), [
        "Line 5: no permission_request is waiting for tool_use_id \"zzz\".",
        "Line 6: the permission_response's `behavior` must be \"allow\" or \"deny\", not \"maybe\"."
      ])
    }))

  it.live("an answer that comes back before the prompter is asked (a slow PermissionRequest hook) is kept", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness("default", {}, "40 millis")
      yield* h.send(toolUse("w", "Change", "w"))
      yield* h.until((line) => line.type === "permission_request")
      yield* h.send({ type: "permission_response", tool_use_id: "w", behavior: "allow" })
      yield* h.open("w")
      yield* h.until((line) => line.type === "tool_result")
      yield* h.input.end
      yield* Fiber.join(h.fiber)
      assert.deepStrictEqual(h.output.filter((line) => line.type === "error"), [])
      assert.deepStrictEqual(results(h.output).map((r) => [r.tool_use_id, r.content]), [["w", "w done"]])
    }))

  it.live("EOF with a permission request unanswered denies it: exec never hangs", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness()
      yield* h.send(toolUse("w", "Change", "w"))
      yield* h.until((line) => line.type === "permission_request")
      yield* h.input.end
      yield* Fiber.join(h.fiber)
      assert.deepStrictEqual(results(h.output).map((r) => [r.content, r.is_error]), [[
        "Permission to use Change was not granted: stdin was closed before a permission_response for w arrived, so it was denied.",
        true
      ]])
    }))

  it.live("abort interrupts what runs and denies waiting asks; later calls run normally", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness()
      yield* h.send(toolUse("ask", "Change", "ask"))
      yield* h.until((line) => line.type === "permission_request")
      yield* h.send({ type: "abort" })
      yield* h.until((line) => line.tool_use_id === "ask" && line.type === "tool_result")
      yield* h.send(toolUse("long", "Look", "long"))
      yield* Effect.sleep("10 millis")
      yield* h.send({ type: "abort" }, toolUse("later", "Look", "later"))
      yield* h.open("later")
      yield* h.input.end
      yield* Fiber.join(h.fiber)
      assert.deepStrictEqual(results(h.output).map((r) => [r.tool_use_id, r.content]), [
        // A `cancel` call waiting for its answer is interrupted like a running one (a `block` one is denied).
        [
          "ask",
          "<tool_use_error>Interrupted by user: Change was stopped before it finished, so its work may be incomplete. Wait for the user to tell you how to proceed.</tool_use_error>"
        ],
        [
          "long",
          "<tool_use_error>Interrupted by user: Look was stopped before it finished, so its work may be incomplete. Wait for the user to tell you how to proceed.</tool_use_error>"
        ],
        ["later", "later done"]
      ])
    }))

  it.live("interrupting the loop (SIGINT) still flushes one result per call", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness("bypassPermissions")
      yield* h.send(toolUse("x", "Look", "x"), toolUse("y", "Change", "y"))
      yield* h.until((line) => line.type === "ready")
      yield* Effect.sleep("10 millis")
      yield* Fiber.interrupt(h.fiber)
      assert.deepStrictEqual(results(h.output).map((r) => [r.tool_use_id, r.is_error]), [["x", true], ["y", true]])
    }))

  it.live("interrupted (SIGTERM) while a permission request waits: the ask ends, its result is flushed", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness()
      yield* h.send(toolUse("w", "Change", "w"))
      yield* h.until((line) => line.type === "permission_request")
      yield* Fiber.interrupt(h.fiber)
      assert.deepStrictEqual(results(h.output).map((r) => [r.tool_use_id, r.is_error]), [["w", true]])
    }))

  it.live("interrupted after EOF, while the last calls finish, it still flushes their results", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness("bypassPermissions")
      yield* h.send(toolUse("x", "Look", "x"))
      yield* h.input.end
      yield* Effect.sleep("20 millis")
      yield* Fiber.interrupt(h.fiber)
      assert.deepStrictEqual(results(h.output).map((r) => [r.tool_use_id, r.is_error]), [["x", true]])
    }))

  it.live("a failing cascading call cancels its running siblings, unless the settings say none", () =>
    Effect.gen(function*() {
      const run = (cascade: ToolOrchestration.CascadePolicy | undefined) =>
        Effect.gen(function*() {
          const h = yield* makeHarness("bypassPermissions", cascade === undefined ? {} : { cascade })
          yield* h.send(toolUse("sib", "Look", "sib"), toolUse("sh", "Shell", "sh"))
          yield* Effect.sleep("10 millis")
          yield* h.open("sh")
          yield* Effect.sleep("30 millis")
          yield* h.open("sib")
          yield* h.input.end
          yield* Fiber.join(h.fiber)
          return results(h.output).map((r) => r.content)
        })
      assert.deepStrictEqual(yield* run(undefined), [
        "<tool_use_error>Cancelled: parallel tool call Shell errored</tool_use_error>",
        "<tool_use_error>sh failed</tool_use_error>"
      ])
      assert.deepStrictEqual(yield* run({ tools: "none", readOnly: false }), [
        "sib done",
        "<tool_use_error>sh failed</tool_use_error>"
      ])
    }))

  it.live("a cascade stays within its assistant message: an earlier message's call goes on, a streamed one is cancelled", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness("bypassPermissions")
      yield* h.send({ role: "assistant", content: [toolUse("earlier", "Look", "earlier")] })
      // Lone tool_use lines, as a peer streams them: one message, the next after the complete one above.
      yield* h.send(toolUse("sh", "Shell", "sh"), toolUse("sib", "Look", "sib"))
      yield* Effect.sleep("10 millis")
      yield* h.open("sh")
      // Its result waits behind the earlier call's, so there is no line to wait for.
      yield* Effect.sleep("30 millis")
      // Streamed after the failure into the same message: cancelled as Claude Code cancels it.
      yield* h.send(toolUse("streamed", "Look", "streamed"))
      yield* h.open("earlier")
      yield* h.open("sib")
      yield* h.input.end
      yield* Fiber.join(h.fiber)
      const cancelled = "<tool_use_error>Cancelled: parallel tool call Shell errored</tool_use_error>"
      assert.deepStrictEqual(results(h.output).map((r) => [r.tool_use_id, r.content]), [
        ["earlier", "earlier done"],
        ["sh", "<tool_use_error>sh failed</tool_use_error>"],
        ["sib", cancelled],
        ["streamed", cancelled]
      ])
    }))

  it.live("a lone tool_use sent once every call of the streamed message has its result starts a new message", () =>
    Effect.gen(function*() {
      const h = yield* makeHarness("bypassPermissions")
      yield* h.send(toolUse("sh", "Shell", "sh"))
      yield* h.open("sh")
      yield* h.until((line) => line.tool_use_id === "sh")
      // The model has read the failure and answers with a new call: the cascade is over.
      yield* h.send(toolUse("next", "Look", "next"))
      yield* h.open("next")
      yield* h.input.end
      yield* Fiber.join(h.fiber)
      assert.deepStrictEqual(results(h.output).map((r) => [r.tool_use_id, r.content]), [
        ["sh", "<tool_use_error>sh failed</tool_use_error>"],
        ["next", "next done"]
      ])
    }))

  it.effect("the cascade policy comes from the toolErrorCascade setting; a bad value names the key and the files", () =>
    Effect.gen(function*() {
      const resolved = (merged: Record<string, unknown>) => ({
        permissionContext: Permission.emptyPermissionContext(),
        hooks: [],
        env: {},
        merged,
        sources: ["/p/.toolwright/settings.json"]
      })
      assert.isUndefined(yield* ExecCommand.cascadeFromSettings(resolved({})))
      assert.deepStrictEqual(yield* ExecCommand.cascadeFromSettings(resolved({ toolErrorCascade: "none" })), {
        tools: "none",
        readOnly: false
      })
      assert.deepStrictEqual(
        yield* ExecCommand.cascadeFromSettings(resolved({ toolErrorCascade: { tools: ["Bash"], readOnly: true } })),
        { tools: ["Bash"], readOnly: true }
      )
      const error = yield* Effect.flip(ExecCommand.cascadeFromSettings(resolved({ toolErrorCascade: "sometimes" })))
      assert.isTrue(
        error.message.startsWith(
          "Invalid settings (/p/.toolwright/settings.json): toolErrorCascade must be \"none\", \"declared\" or " +
            "{\"tools\": \"declared\" | \"none\" | [\"Bash\", ...], \"readOnly\": true | false}, but it is \"sometimes\".\n"
        ),
        error.message
      )
    }))

  it.live("a write to a full stdout waits for it to drain, and a closed stdout never blocks the loop", () =>
    Effect.gen(function*() {
      // A peer that reads only when told to.
      let reading = false
      const pending: Array<(error?: Error | null) => void> = []
      const sink = new Writable({
        highWaterMark: 16,
        write: (_chunk, _encoding, callback) => (reading ? callback() : void pending.push(callback))
      })
      const write = ExecCommand.writeLineTo(sink)
      yield* write("short")
      const blocked = yield* Effect.fork(write("a line longer than the sixteen bytes the buffer holds"))
      yield* Effect.sleep("20 millis")
      assert.isNull(blocked.unsafePoll(), "a write past the buffer waits while the peer reads nothing")
      yield* Effect.sync(() => {
        reading = true
        pending.splice(0).forEach((callback) => callback())
      })
      yield* Fiber.join(blocked)
      reading = false

      const full = yield* Effect.fork(write("x".repeat(64)).pipe(Effect.zipRight(write("y"))))
      yield* Effect.sleep("20 millis")
      yield* Effect.sync(() => sink.destroy(new Error("EPIPE")))
      yield* Fiber.join(full)
      yield* write("after the peer is gone")
    }))

  it.prop(
    "parseLine answers any line (text or JSON of any shape) without throwing, and explains every refusal",
    [FastCheck.oneof(FastCheck.string(), FastCheck.json(), FastCheck.jsonValue().map((value) => JSON.stringify(value)))],
    ([line]) => {
      const parsed = ExecCommand.parseLine(line)
      if (parsed._tag === "Invalid") assert.isAbove(parsed.problem.length, 10)
      if (parsed._tag === "Calls") for (const use of parsed.toolUses) assert.isString(use.id)
    },
    { fastCheck: { numRuns: 2000 } }
  )
})
