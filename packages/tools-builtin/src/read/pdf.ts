/**
 * PDFs for Read: the text of each page, extracted with unpdf (pdf.js built for servers, no native code,
 * loaded only when a PDF is read). More than 10 pages need `pages` ("3" or "1-5"), at most 20 a request,
 * so a model never pulls a whole book into its context by accident.
 */
import { ToolErrors, ToolPlugin } from "@toolwright/core"
import { Effect, Predicate } from "effect"

/** A PDF with more pages than this must be read with `pages`. */
export const MAX_PAGES_WITHOUT_RANGE = 10
/** At most this many pages per call. */
export const MAX_PAGES_PER_READ = 20

export interface PageRange {
  readonly first: number
  readonly last: number
}

/** `"3"` or `"1-5"` as a range of 1-based pages, or a message saying what is wrong with it. */
export const parsePages = (pages: string): PageRange | string => {
  const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(pages)
  if (match === null) return `pages must be a page number or a range like "1-5"; got "${pages}".`
  const first = Number(match[1])
  const last = match[2] === undefined ? first : Number(match[2])
  if (first < 1 || last < first) return `pages must count from 1 and end after it starts; got "${pages}".`
  if (last - first + 1 > MAX_PAGES_PER_READ) {
    return `pages "${pages}" asks for ${last - first + 1} pages; at most ${MAX_PAGES_PER_READ} can be read at once.`
  }
  return { first, last }
}

export interface PdfText {
  readonly totalPages: number
  readonly first: number
  readonly pages: ReadonlyArray<string>
}

const fail = (message: string) => Effect.fail(new ToolErrors.ToolError({ message }))

const reason = (error: unknown): string => {
  const name = error instanceof Error ? error.name : ""
  if (name === "PasswordException") return "it is password-protected"
  return error instanceof Error ? error.message : String(error)
}

/** A text item's string, with the line break pdf.js marks after it. */
const itemText = (item: unknown): string =>
  Predicate.hasProperty(item, "str") && typeof item.str === "string"
    ? item.str + (Predicate.hasProperty(item, "hasEOL") && item.hasEOL === true ? "\n" : "")
    : ""

/** The text of the requested pages (all of a short PDF when `range` is absent). */
export const readPdf = (
  file: string,
  bytes: Uint8Array,
  range: PageRange | undefined
): Effect.Effect<PdfText, ToolErrors.ToolError> =>
  Effect.gen(function*() {
    if (bytes.length === 0) return yield* fail(`The PDF file is empty: ${file}`)
    const { getDocumentProxy } = yield* Effect.tryPromise({
      try: () => ToolPlugin.importModule("unpdf", () => import("unpdf")),
      catch: (error) =>
        new ToolErrors.ToolError({ message: `Could not read the PDF ${file}: the PDF library did not load (${reason(error)}).` })
    })
    // pdf.js takes ownership of the buffer it is given, so it gets a copy. Verbosity 0: its warnings go to
    // stdout, which must stay clean (the MCP server and `run --json` speak on it).
    const document = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 }),
        catch: (error) => new ToolErrors.ToolError({ message: `Could not read the PDF ${file}: ${reason(error)}.` })
      }),
      (document) => Effect.promise(() => document.destroy())
    )
    const totalPages = document.numPages
    if (range === undefined && totalPages > MAX_PAGES_WITHOUT_RANGE) {
      return yield* fail(
        `This PDF has ${totalPages} pages, which is too many to read at once. Use the pages parameter to read specific page ranges (e.g., pages: "1-5"). Maximum ${MAX_PAGES_PER_READ} pages per request.`
      )
    }
    const first = range?.first ?? 1
    const last = Math.min(range?.last ?? totalPages, totalPages)
    if (first > totalPages) {
      return yield* fail(`This PDF has ${totalPages} pages; pages from ${first} do not exist.`)
    }
    // Only the requested pages are parsed: reading pages 1-5 of a book costs five pages.
    const pages = yield* Effect.tryPromise({
      try: async () => {
        const texts: Array<string> = []
        for (let number = first; number <= last; number++) {
          const page = await document.getPage(number)
          const content = await page.getTextContent()
          texts.push(content.items.map(itemText).join(""))
        }
        return texts
      },
      catch: (error) => new ToolErrors.ToolError({ message: `Could not read the PDF ${file}: ${reason(error)}.` })
    })
    return { totalPages, first, pages }
  }).pipe(Effect.scoped)

/** The pages as the model reads them. */
export const renderPdf = (file: string, pdf: PdfText): string => {
  const last = pdf.first + pdf.pages.length - 1
  const header = pdf.pages.length === pdf.totalPages
    ? `PDF file: ${file} (${pdf.totalPages} ${pdf.totalPages === 1 ? "page" : "pages"})`
    : `PDF file: ${file} (pages ${pdf.first}-${last} of ${pdf.totalPages})`
  const pages = pdf.pages.map((text, i) => {
    const body = text.trim() === "" ? "(no text on this page: it may be a scanned image)" : text.trim()
    return `<page number="${pdf.first + i}">\n${body}\n</page>`
  })
  return [header, ...pages].join("\n")
}
