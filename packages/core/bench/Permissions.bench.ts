/**
 * The time to decide one call against 1,000 permission rules (deny, ask and allow lists as a big team's
 * settings would have), with 10 rules as the baseline, in µs per decision. Goal: under 50 µs.
 */
import { Effect, Schema } from "effect"
import type { Permission } from "../src/index.js"
import { PermissionPolicy, Tool, ToolUseContext } from "../src/index.js"

const Bash = Tool.make({
  name: "Bash",
  description: "bench",
  input: Schema.Struct({ command: Schema.String }),
  ruleSubjects: (input) => ({ specifiers: input.command.split(" && "), paths: [] }),
  call: () => Effect.void
})
const Read = Tool.make({
  name: "Read",
  description: "bench",
  input: Schema.Struct({ file_path: Schema.String }),
  isReadOnly: () => true,
  getPath: (input) => input.file_path,
  call: () => Effect.void
})

const commands = ["git", "npm", "pnpm", "docker", "kubectl", "cargo", "make", "python", "node", "go"]
const rulesOf = (count: number) => {
  const allow: Array<Permission.RuleEntry> = []
  const deny: Array<Permission.RuleEntry> = []
  const ask: Array<Permission.RuleEntry> = []
  for (let i = 0; i < count; i++) {
    const command = commands[i % commands.length]
    const entry = (rule: string) => ({ rule, source: "/bench/.toolwright/settings.json", root: "/bench" })
    switch (i % 10) {
      case 0:
        deny.push(entry(`Bash(${command} danger-${i} *)`))
        break
      case 1:
        ask.push(entry(`Bash(${command} publish-${i}:*)`))
        break
      case 2:
        deny.push(entry(`Read(./secrets-${i}/**)`))
        break
      case 3:
        allow.push(entry(`Edit(./src-${i}/**/*.ts)`))
        break
      case 4:
        allow.push(entry(`WebFetch(domain:*.site-${i}.com)`))
        break
      case 5:
        allow.push(entry(`mcp__server${i}__tool`))
        break
      default:
        allow.push(entry(`Bash(${command} task-${i} *)`))
    }
  }
  // The rule that finally allows the benchmarked calls comes last, so every list is scanned.
  allow.push({ rule: "Bash(npm run test:*)", source: "/bench/settings.json" })
  return { allow, deny, ask }
}

const contextOf = (count: number) => {
  const { allow, ask, deny } = rulesOf(count)
  return ToolUseContext.make({
    cwd: "/bench",
    permissionContext: { mode: "default", allow, deny, ask, additionalDirectories: [], homeDir: "/home/bench" }
  })
}

const policy = PermissionPolicy.makeRules()
const N = 10_000

const measure = (tool: Tool.Any, input: unknown, count: number): number => {
  const context = contextOf(count)
  const loop = Effect.gen(function*() {
    for (let i = 0; i < N; i++) yield* policy.decide(tool, input, context, {})
  })
  const check = Effect.runSync(policy.decide(tool, input, context, {}))
  if (check.behavior === "deny") throw new Error(`unexpected decision ${JSON.stringify(check)}`)
  Effect.runSync(loop) // warm-up, and rules compiled
  const rounds: Array<number> = []
  for (let round = 0; round < 5; round++) {
    const start = performance.now()
    Effect.runSync(loop)
    rounds.push(((performance.now() - start) * 1000) / N)
  }
  rounds.sort((a, b) => a - b)
  return rounds[2]
}

const line = (label: string, tool: Tool.Any, input: unknown) => {
  const big = measure(tool, input, 1_000)
  const small = measure(tool, input, 10)
  console.log(
    `${label}, 1,000 rules vs 10 rules: ${big.toFixed(1)} µs vs ${small.toFixed(1)} µs (ratio ${
      (big / small).toFixed(2)
    }, goal < 50 µs per decision)`
  )
}

line("Permission decision for Bash(npm run test -- --watch && git task-16 x)", Bash, {
  command: "npm run test -- --watch && git task-16 x"
})
line("Permission decision for Read(/bench/src/a.ts)", Read, { file_path: "/bench/src/a.ts" })
