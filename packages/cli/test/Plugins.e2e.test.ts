// Plugins named in settings: a JavaScript package importing @toolwright/core is loaded by the bundled
// CLI, its tools join the pool after the built-ins and run through the whole pipeline.
import { assert, describe, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const bin = join(import.meta.dirname, "..", "dist", "toolwright.mjs")
const fixtures = join(import.meta.dirname, "fixtures")

const inProject = (plugins: unknown, args: ReadonlyArray<string>) => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "tw-plugins-")))
  try {
    mkdirSync(join(dir, ".toolwright"))
    const settings = join(dir, ".toolwright", "settings.json")
    writeFileSync(settings, JSON.stringify({ plugins }))
    const result = spawnSync(process.execPath, [bin, ...args, "--cwd", dir], {
      encoding: "utf8",
      input: "",
      env: { ...process.env, HOME: dir }
    })
    return { code: result.status, stdout: result.stdout, stderr: result.stderr, settings, dir }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe("plugins from settings", () => {
  it("runs a plugin's tool through the pipeline, with its progress on stderr", () => {
    const result = inProject([join(fixtures, "shout-plugin.mjs")], ["run", "Shout", "--input", `{"text":"hi there"}`])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.strictEqual(result.stdout, "HI THERE\n")
    assert.strictEqual(result.stderr, `[Shout] {"shouting":8}\n`)
  })

  it("lists a plugin's tools after the built-ins, with their source", () => {
    const result = inProject([join(fixtures, "shout-plugin.mjs")], ["tools", "list", "--json"])
    assert.strictEqual(result.code, 0, result.stderr)
    const rows: Array<{ name: string; source: string; plugin?: string }> = JSON.parse(result.stdout)
    const shout = rows.findIndex((row) => row.name === "Shout")
    assert.deepStrictEqual(rows[shout], {
      ...rows[shout],
      source: "plugin",
      plugin: "@acme/toolwright-shout"
    })
    assert.isTrue(rows.slice(0, shout).every((row) => row.source === "builtin"))
  })

  it("validates a plugin tool's input like any other", () => {
    const result = inProject([join(fixtures, "shout-plugin.mjs")], ["run", "Shout", "--input", `{"text":1}`])
    assert.strictEqual(result.code, 1)
    assert.strictEqual(
      result.stdout,
      "<tool_use_error>InputValidationError: Shout failed due to the following issue:\n" +
        "The parameter `text` type is expected as `string` but provided as `number`</tool_use_error>\n"
    )
  })

  it("stops with exit 2 naming the entry when a plugin is missing, is not a plugin, or the list is malformed", () => {
    const missing = inProject(["./tools/missing.mjs"], ["run", "Read", "--input", `{"file_path":"x"}`])
    assert.strictEqual(missing.code, 2)
    assert.match(
      missing.stderr,
      /^Error: Cannot load the plugin "\.\/tools\/missing\.mjs" named in .*settings\.json: .*Check the path \(relative to the project directory\)/
    )
    const notPlugin = inProject([join(fixtures, "not-a-plugin.mjs")], ["tools", "list"])
    assert.strictEqual(notPlugin.code, 2)
    assert.strictEqual(
      notPlugin.stderr,
      `Error: The plugin "${join(fixtures, "not-a-plugin.mjs")}" named in ${notPlugin.settings} has no ToolPlugin as ` +
        "its default export. Export one: export default ToolPlugin.make({ name, version, tools }).\n"
    )
    const malformed = inProject("shout", ["tools", "list"])
    assert.strictEqual(malformed.code, 2)
    assert.include(malformed.stderr, "at plugins: expected an array of package names or paths")
  })
})
