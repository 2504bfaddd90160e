/**
 * How the CLI shows runtime events to a person: progress on stderr as one short line per event, and a
 * result's content as text on stdout (images and tool references as placeholders).
 */
import type { Message } from "@toolwright/core"

const truncate = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/**
 * What a progress event says to a person: an MCP server's message and count (`waited 50 ms (50/100)`), the
 * last line a command printed (Bash), else the event as JSON.
 */
const progressText = (data: unknown): string => {
  if (typeof data === "string") return data
  if (isRecord(data) && typeof data.output === "string") {
    const lines = data.output.split("\n").filter((line) => line.trim() !== "")
    return lines.at(-1) ?? ""
  }
  if (isRecord(data) && typeof data.progress === "number") {
    const count = `(${data.progress}${typeof data.total === "number" ? `/${data.total}` : ""})`
    return typeof data.message === "string" && data.message.trim() !== "" ? `${data.message} ${count}` : count
  }
  return JSON.stringify(data) ?? ""
}

/** One line for a progress event; none for an event with nothing to show (a command printing blank lines). */
export const progressLine = (event: Message.Progress): string | undefined => {
  const text = progressText(event.data).replace(/\s+/g, " ").trim()
  return text === "" ? undefined : `[${event.toolName}] ${truncate(text, 200)}`
}

/** The text of a result's content as a person reads it. */
export const contentToText = (content: Message.ToolResultContent): string =>
  typeof content === "string"
    ? content
    : content
      .map((block) =>
        block.type === "text"
          ? block.text
          : block.type === "image"
          ? `[image ${block.source.media_type}, ${Math.round(block.source.data.length * 3 / 4)} bytes]`
          : `[tool reference ${block.tool_name}]`
      )
      .join("\n")
