/**
 * Converts between MCP tool results and tool_result content. Text and the images a model can see (up to the
 * API's 5 MB) stay inline; audio, larger images and other binary payloads are written to the session's
 * directory and the model is told where; resource links and embedded resources become text saying what and
 * where they are; `structuredContent` is the result when a server sends no content blocks.
 */
import type { Message } from "@toolwright/core"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"
import * as path from "node:path"

type ContentBlock = CallToolResult["content"][number]
type OutBlock = Message.TextBlock | Message.ImageBlock

/** The parts of an MCP tool result that become tool_result content. */
export interface CallResult {
  readonly content?: ReadonlyArray<ContentBlock> | undefined
  readonly structuredContent?: unknown
  readonly isError?: boolean | undefined
}


/** The image type its first bytes show, if it is one a model can see. */
const sniffImageType = (base64: string): Message.ImageSource["media_type"] | undefined => {
  const head = Buffer.from(base64.slice(0, 24), "base64")
  if (head.subarray(0, 4).toString("hex") === "89504e47") return "image/png"
  if (head.subarray(0, 3).toString("hex") === "ffd8ff") return "image/jpeg"
  if (head.subarray(0, 4).toString("latin1") === "GIF8") return "image/gif"
  if (head.subarray(0, 4).toString("latin1") === "RIFF" && head.subarray(8, 12).toString("latin1") === "WEBP") {
    return "image/webp"
  }
  return undefined
}

/**
 * The media type an image is sent with, from its bytes alone. The API refuses an image whose bytes are not
 * what its type says, and servers mislabel (a PNG screenshot as image/jpeg, "image/jpg", an SVG as image/png):
 * bytes that are none of PNG, JPEG, GIF or WebP are no image the model can see, whatever the label says
 * (undefined: the caller saves them to a file instead).
 */
const imageTypeOf = (base64: string): Message.ImageSource["media_type"] | undefined => sniffImageType(base64)

/** The most base64 the model API takes for one image (5 MB); a larger one would fail the whole request. */
const MAX_INLINE_IMAGE_BASE64 = 5 * 1024 * 1024

const EXTENSIONS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
  "audio/ogg": "ogg",
  "audio/webm": "webm",
  "application/pdf": "pdf",
  "application/gzip": "gz",
  "application/zip": "zip",
  "application/json": "json",
  "image/svg+xml": "svg",
  "image/bmp": "bmp",
  "image/tiff": "tiff"
}

/** Where binary payloads a model cannot read inline are written; undefined keeps only a description. */
export interface BlobSink {
  readonly directory: string
  readonly prefix: string
}

const byteLength = (base64: string): number => Math.floor(base64.length * 3 / 4) - (base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0)

const saveBlob = (sink: BlobSink | undefined, index: number, mimeType: string, base64: string): string | undefined => {
  if (sink === undefined) return undefined
  try {
    // Readable by the user only, like the tool results the result store persists beside them.
    fs.mkdirSync(sink.directory, { recursive: true, mode: 0o700 })
    const file = path.join(sink.directory, `${sink.prefix}-${index}.${EXTENSIONS[mimeType] ?? "bin"}`)
    fs.writeFileSync(file, Buffer.from(base64, "base64"), { mode: 0o600 })
    fs.chmodSync(file, 0o600)
    return file
  } catch {
    return undefined
  }
}

const describeBinary = (
  kind: string,
  mimeType: string,
  base64: string,
  saved: string | undefined
): string =>
  saved === undefined
    ? `[${kind} content (${mimeType}, ${byteLength(base64)} bytes) was returned but cannot be shown]`
    : `[${kind} content (${mimeType}, ${byteLength(base64)} bytes) saved to ${saved}]`

/**
 * An image the model can see inline, unless it is over the API's limit: then it is saved, and the model told
 * to Read it (Read resizes images).
 */
const imageBlock = (
  mimeType: Message.ImageSource["media_type"],
  base64: string,
  index: number,
  sink: BlobSink | undefined
): OutBlock => {
  if (base64.length <= MAX_INLINE_IMAGE_BASE64) {
    return { type: "image", source: { type: "base64", media_type: mimeType, data: base64 } }
  }
  const saved = saveBlob(sink, index, mimeType, base64)
  const size = `${mimeType}, ${byteLength(base64)} bytes`
  return {
    type: "text",
    text: saved === undefined
      ? `[Image content (${size}) was returned but is too large to show inline (over 5 MB as base64)]`
      : `[Image content (${size}) saved to ${saved}: too large to show inline (over 5 MB as base64); Read the ` +
        `file to see it resized]`
  }
}

const mapBlock = (block: ContentBlock, index: number, serverName: string, sink: BlobSink | undefined): OutBlock => {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text }
    case "image": {
      const imageType = imageTypeOf(block.data)
      if (imageType !== undefined) return imageBlock(imageType, block.data, index, sink)
      return {
        type: "text",
        text: describeBinary("Image", block.mimeType, block.data, saveBlob(sink, index, block.mimeType, block.data))
      }
    }
    case "audio":
      return {
        type: "text",
        text: describeBinary("Audio", block.mimeType, block.data, saveBlob(sink, index, block.mimeType, block.data))
      }
    case "resource_link": {
      const details = [block.mimeType, block.description].filter((item) => item !== undefined && item !== "")
      return {
        type: "text",
        text: `[Resource link: ${block.name}] ${block.uri}${details.length > 0 ? ` (${details.join(", ")})` : ""}`
      }
    }
    case "resource": {
      const resource = block.resource
      if ("text" in resource && typeof resource.text === "string") {
        return { type: "text", text: `[Resource from ${serverName} at ${resource.uri}] ${resource.text}` }
      }
      if ("blob" in resource && typeof resource.blob === "string") {
        const mimeType = resource.mimeType ?? "application/octet-stream"
        const imageType = mimeType.startsWith("image/") ? imageTypeOf(resource.blob) : undefined
        if (imageType !== undefined) {
          const image = imageBlock(imageType, resource.blob, index, sink)
          return image.type === "image" ? image : { type: "text", text: `[Resource from ${serverName} at ${resource.uri}] ${image.text}` }
        }
        const saved = saveBlob(sink, index, mimeType, resource.blob)
        return {
          type: "text",
          text: `[Resource from ${serverName} at ${resource.uri}] ${describeBinary("Binary", mimeType, resource.blob, saved)}`
        }
      }
      return { type: "text", text: `[Resource from ${serverName} at ${resource.uri}]` }
    }
    default:
      return { type: "text", text: JSON.stringify(block) }
  }
}

/**
 * The content a model reads for a successful MCP call. Content blocks win; a server that only sends
 * `structuredContent` is rendered as its JSON. Text-only results collapse to one string.
 */
export const toToolResultContent = (
  result: CallResult,
  serverName: string,
  sink?: BlobSink
): Message.ToolResultContent => {
  const content = result.content ?? []
  if (content.length === 0) {
    return result.structuredContent === undefined ? "" : JSON.stringify(result.structuredContent)
  }
  const blocks = content.map((block, index) => mapBlock(block, index, serverName, sink))
  if (blocks.every((block) => block.type === "text")) {
    return blocks.map((block) => (block.type === "text" ? block.text : "")).join("\n")
  }
  return blocks
}

/** One part of a resource read with `resources/read`: text, or base64 `blob`. */
export interface ResourceContent {
  readonly uri: string
  readonly mimeType?: string | undefined
  readonly text?: string | undefined
  readonly blob?: string | undefined
}

/**
 * A read resource as the model reads it (ReadMcpResourceTool): `{"contents": [...]}` with texts as they are and
 * each binary part saved through `sink`, named by `blobSavedTo`.
 */
export const resourceContentsText = (contents: ReadonlyArray<ResourceContent>, sink: BlobSink | undefined): string =>
  JSON.stringify({
    contents: contents.map((item, index) => {
      const head = { uri: item.uri, ...(item.mimeType === undefined ? {} : { mimeType: item.mimeType }) }
      if (typeof item.text === "string") return { ...head, text: item.text }
      if (typeof item.blob !== "string") return head
      const mimeType = item.mimeType ?? "application/octet-stream"
      const saved = saveBlob(sink, index, mimeType, item.blob)
      return saved === undefined
        ? { ...head, text: describeBinary("Binary", mimeType, item.blob, undefined) }
        : { ...head, blobSavedTo: saved }
    })
  })

/** The text of an MCP error result (`isError: true`), what the model reads inside `<tool_use_error>`. */
export const errorText = (
  result: CallResult,
  serverName: string,
  toolName: string
): string => {
  const content = toToolResultContent(result, serverName)
  const text = typeof content === "string"
    ? content
    : content.map((block) => (block.type === "text" ? block.text : "[image]")).join("\n")
  return text.trim() === "" ? `The MCP tool ${toolName} of server ${serverName} reported an error without a message` : text
}

/** toolwright tool_result content as MCP content blocks, for `toolwright mcp serve`. */
export const toMcpContent = (content: Message.ToolResultContent): CallToolResult["content"] => {
  if (typeof content === "string") return [{ type: "text", text: content }]
  return content.map((block) => {
    switch (block.type) {
      case "text":
        return { type: "text", text: block.text }
      case "image":
        return { type: "image", data: block.source.data, mimeType: block.source.media_type }
      case "tool_reference":
        return { type: "text", text: `[tool reference ${block.tool_name}]` }
    }
  })
}
