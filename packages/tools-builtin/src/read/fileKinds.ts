/**
 * What kind of file an extension names, for Read: images it shows, notebooks and PDFs it renders, and
 * the binary formats it refuses without reading a byte.
 */

export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp"

const IMAGE_MEDIA_TYPES: ReadonlyMap<string, ImageMediaType> = new Map([
  [".png", "image/png"],
  [".jpg", "image/jpeg"],
  [".jpeg", "image/jpeg"],
  [".gif", "image/gif"],
  [".webp", "image/webp"]
])

export const imageMediaType = (extension: string): ImageMediaType | undefined => IMAGE_MEDIA_TYPES.get(extension)

/** Formats no text view can help with: audio, video, archives, executables, databases, office files, fonts. */
export const BINARY_EXTENSIONS: ReadonlySet<string> = new Set([
  ".mp3", ".wav", ".flac", ".ogg", ".aac", ".m4a", ".wma", ".aiff", ".opus",
  ".mp4", ".avi", ".mov", ".wmv", ".flv", ".mkv", ".webm", ".m4v", ".mpeg", ".mpg",
  ".zip", ".rar", ".tar", ".gz", ".bz2", ".7z", ".xz", ".z", ".tgz", ".iso", ".zst",
  ".exe", ".dll", ".so", ".dylib", ".app", ".msi", ".deb", ".rpm", ".bin", ".o", ".a", ".wasm",
  ".dat", ".db", ".sqlite", ".sqlite3", ".mdb", ".idx",
  ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp",
  ".ttf", ".otf", ".woff", ".woff2", ".eot",
  ".psd", ".ai", ".eps", ".sketch", ".fig", ".xd", ".blend", ".3ds", ".max",
  ".bmp", ".ico", ".tif", ".tiff", ".heic", ".avif",
  ".class", ".jar", ".war", ".pyc", ".pyo", ".rlib", ".swf", ".fla"
])
