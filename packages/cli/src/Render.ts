/**
 * How the CLI shows runtime events to a person: progress on stderr as one short line per event, and a
 * result's content as text on stdout (images and tool references as placeholders).
 */
import type { Message } from "@toolwright/core"

const truncate = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`)

/** One line for a progress event. */
export const progressLine = (event: Message.Progress): string => {
  const data = event.data
  const text = typeof data === "string" ? data : JSON.stringify(data) ?? ""
  return `[${event.toolName}] ${truncate(text.replace(/\s+/g, " ").trim(), 200)}`
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
