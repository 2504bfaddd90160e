/**
 * The descriptions of TaskOutput and TaskStop for the model: how background tasks started by Bash are
 * read and stopped.
 */

export const TASK_OUTPUT_DESCRIPTION = "Reads the new output and the status of a background task"

export const taskOutputPrompt = `Retrieves output from a running or completed background task (a Bash command
started with run_in_background).

- Takes the task_id that Bash returned.
- Returns only the output written since the previous TaskOutput call for that task, and the task's status
  (running, completed, failed or killed) with its exit code once it has ended.
- block (default true) waits for the task to finish, up to timeout milliseconds (default 30000, max 600000); with
  block false it returns at once with whatever is new.
- Use it to check on servers, watchers and long builds without blocking on them.`

export const TASK_STOP_DESCRIPTION = "Stops a running background task"

export const taskStopPrompt = `Stops a running background task by its ID.

- Takes the task_id that Bash returned for a command started with run_in_background.
- Kills the task's whole process group (everything the command started), then reports it stopped.
- Use it when a server, watcher or long command is no longer needed.`
