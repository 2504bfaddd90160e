/**
 * The Bash tool's description for the model: what the tool does, its limits, and the habits that keep
 * an agent's shell use safe and its context small.
 */

export const DESCRIPTION = "Executes a bash command with an optional timeout; the working directory persists"

export interface Limits {
  readonly defaultTimeoutMs: number
  readonly maxTimeoutMs: number
  readonly maxOutputChars: number
}

export const prompt = (limits: Limits) =>
  `Executes a given bash command and returns its output.

The working directory persists between commands (a \`cd\` applies to the next call), but it never leaves the
project's working directories: if a command ends outside them, the shell's cwd is reset and the result says so.
Shell state other than the directory (variables, functions) does not persist.

Before running a command:
- If it creates files or directories, check first (with Glob or ls) that the parent directory exists.
- Quote paths that contain spaces with double quotes: cd "path with spaces/file.txt".

Usage notes:
- The command argument is required.
- You can give an optional timeout in milliseconds, up to ${limits.maxTimeoutMs}ms (${
    limits.maxTimeoutMs / 60_000
  } minutes). Without it, the command times out after ${limits.defaultTimeoutMs}ms (${
    limits.defaultTimeoutMs / 60_000
  } minutes).
- Write a clear, concise description of what the command does in 5-10 words.
- stdout and stderr are returned together, in the order they were written. Output longer than ${limits.maxOutputChars}
  characters is cut in the middle; the full output is saved to a file whose path the result gives.
- A command that exits with a non-zero status is reported as an error starting with "Exit code N". Exit status 1 of
  grep, rg, diff, test/[ or find, when it is the whole command or ends its only pipeline, is an answer instead
  ("No matches found", the differences, "Condition is false").
- Set run_in_background to true for long-running commands (servers, watchers, long builds): the call returns at
  once with a task id; read the output with TaskOutput and stop the task with TaskStop. Do not append "&".
- Prefer the dedicated tools over shell equivalents: Glob instead of find or ls, Grep instead of grep or rg,
  Read instead of cat, head or tail, Edit instead of sed or awk, Write instead of echo redirection.
- Chain dependent commands with '&&'; use ';' only when later commands should run even if earlier ones fail.
  Do not use newlines to separate commands (newlines are fine inside quoted strings).
- Avoid interactive commands (editors, pagers, prompts): stdin is empty and nobody can answer.`
