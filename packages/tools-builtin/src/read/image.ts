/**
 * Images for Read: PNG, JPEG, GIF and WebP become an image content block. The media type comes from
 * the bytes (a `.png` that is really a JPEG would be rejected by the API). Images above 2000 px on a
 * side or 3.75 MB (5 MB once base64-encoded, the API's limit) are resized with sharp, loaded only then,
 * re-encoded as JPEG if still too big, and refused with a message when nothing makes them fit.
 */
import type { Message } from "@toolwright/core"
import { ToolErrors, ToolPlugin } from "@toolwright/core"
import { Effect } from "effect"
import type { ImageMediaType } from "./fileKinds.js"

/** The API's limit is 5 MB of base64, which is 3.75 MB of bytes. */
export const MAX_IMAGE_BYTES = Math.floor((5 * 1024 * 1024 * 3) / 4)
/** Larger sides are scaled down; the model sees no more detail beyond this anyway. */
export const MAX_IMAGE_SIDE = 2000

export interface ImageResult {
  readonly mediaType: ImageMediaType
  readonly base64: string
  readonly originalSize: number
  /** Set when the image was resized: its original and new dimensions. */
  readonly resized?: { readonly from: readonly [number, number]; readonly to: readonly [number, number] }
}

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>, at = 0) =>
  bytes.length >= at + prefix.length && prefix.every((byte, i) => bytes[at + i] === byte)

/** The image format the bytes really are, or undefined for anything else. */
export const sniffImage = (bytes: Uint8Array): ImageMediaType | undefined => {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) return "image/gif"
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)) return "image/webp"
  return undefined
}

const fail = (message: string) => Effect.fail(new ToolErrors.ToolError({ message }))

const base64Of = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/** The image, fitted to the limits. */
export const readImage = (
  file: string,
  bytes: Uint8Array
): Effect.Effect<ImageResult, ToolErrors.ToolError> =>
  Effect.gen(function*() {
    if (bytes.length === 0) return yield* fail(`The image file is empty: ${file}`)
    const mediaType = sniffImage(bytes)
    if (mediaType === undefined) {
      return yield* fail(`${file} is not a PNG, JPEG, GIF or WebP image (its first bytes match none of them).`)
    }
    const sharp = yield* Effect.tryPromise({
      try: () => ToolPlugin.importModule("sharp", () => import("sharp")).then((module) => module.default),
      catch: (error) => error
    }).pipe(Effect.option)
    if (sharp._tag === "None") {
      // Without sharp the dimensions are unknown: send what fits the API and refuse the rest.
      if (bytes.length <= MAX_IMAGE_BYTES) return { mediaType, base64: base64Of(bytes), originalSize: bytes.length }
      return yield* fail(
        `The image ${file} is ${bytes.length} bytes, over the ${MAX_IMAGE_BYTES}-byte limit, and cannot be resized here (the sharp image library did not load). Resize it first, e.g. with ImageMagick through Bash.`
      )
    }
    const resize = sharp.value
    return yield* Effect.tryPromise({
      try: async (): Promise<ImageResult | string> => {
        const metadata = await resize(bytes, { animated: false }).metadata()
        const width = metadata.width
        const height = metadata.height
        if (width <= MAX_IMAGE_SIDE && height <= MAX_IMAGE_SIDE && bytes.length <= MAX_IMAGE_BYTES) {
          return { mediaType, base64: base64Of(bytes), originalSize: bytes.length }
        }
        const fitted = resize(bytes, { animated: false }).resize(MAX_IMAGE_SIDE, MAX_IMAGE_SIDE, {
          fit: "inside",
          withoutEnlargement: true
        })
        // Same format first (GIF frames flattened to PNG); JPEG at decreasing quality when still too big.
        const sameFormat = (): [ImageMediaType, typeof fitted] =>
          mediaType === "image/jpeg"
            ? ["image/jpeg", fitted.clone().jpeg({ quality: 85 })]
            : mediaType === "image/webp"
            ? ["image/webp", fitted.clone().webp({ quality: 85 })]
            : ["image/png", fitted.clone().png({ compressionLevel: 9 })]
        const asJpeg = (quality: number): [ImageMediaType, typeof fitted] => [
          "image/jpeg",
          fitted.clone().flatten({ background: "#ffffff" }).jpeg({ quality })
        ]
        const attempts = [sameFormat, () => asJpeg(70), () => asJpeg(40)]
        for (const attempt of attempts) {
          const [type, encoder] = attempt()
          const { data, info } = await encoder.toBuffer({ resolveWithObject: true })
          if (data.length <= MAX_IMAGE_BYTES) {
            return {
              mediaType: type,
              base64: data.toString("base64"),
              originalSize: bytes.length,
              resized: { from: [width, height], to: [info.width, info.height] }
            }
          }
        }
        return `The image ${file} (${width}x${height}, ${bytes.length} bytes) stays over the ${MAX_IMAGE_BYTES}-byte limit even resized to ${MAX_IMAGE_SIDE} px and JPEG-compressed. Crop or shrink it first, e.g. with ImageMagick through Bash.`
      },
      catch: (error) =>
        new ToolErrors.ToolError({
          message: `Could not read the image ${file}: ${error instanceof Error ? error.message : String(error)}`
        })
    }).pipe(Effect.flatMap((result) => (typeof result === "string" ? fail(result) : Effect.succeed(result))))
  })

/** The content block the model sees. */
export const imageBlock = (image: ImageResult): Message.ImageBlock => ({
  type: "image",
  source: { type: "base64", media_type: image.mediaType, data: image.base64 }
})
