/**
 * A process's state and process group from Linux's `/proc/<pid>/stat`, for the Bash tool's liveness checks.
 * A zombie (`Z`) or dead (`X`) process counts as gone: a container's init may never reap it.
 */
import * as fs from "node:fs"

export interface ProcStat {
  /** Whether the process still runs (not a zombie, not dead). */
  readonly live: boolean
  readonly pgrp: number
}

/** The process's stat, or undefined when there is no such process (or no /proc). */
export const procStat = (pid: number | string): ProcStat | undefined => {
  let stat: string
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  } catch {
    return undefined
  }
  // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so parse after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return { live: fields[0] !== "Z" && fields[0] !== "X", pgrp: Number(fields[2]) }
}
