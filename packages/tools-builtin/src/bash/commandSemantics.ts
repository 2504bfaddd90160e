/**
 * What a Bash command line does, as far as permissions and scheduling need to know: every simple command
 * (in lists, pipelines, subshells, loops, substitutions), its words with quoting removed and wrappers
 * (`timeout`, `nice`, `xargs`, …) stripped, its redirections with their targets, the paths its arguments name
 * (for the commands known to take paths), and whether the whole line only reads. Parsed with tree-sitter-bash (wasm). Anything that cannot be proven to mean what it seems to —
 * a parse error, `eval`, `bash -c`, a quoted command name, a substitution — makes the line `opaque`, which
 * the permission stage turns into a question for the user.
 */
import { createRequire } from "node:module"
import * as path from "node:path"
import { ToolPlugin } from "@toolwright/core"
import { Effect } from "effect"
import type { Parser, Node as SyntaxNode } from "web-tree-sitter"

/** Lines longer than this are not analysed: they always ask. */
export const MAX_COMMAND_LENGTH = 10_000

export type CommandKind = "search" | "read" | "list" | "silent" | "other"

/** A redirection: its operator and target; `target` is undefined when it is not a plain path. */
export interface Redirect {
  readonly operator: string
  readonly target: string | undefined
  readonly access: "read" | "write"
}

/**
 * A path a command's arguments name (`cat a.txt`, `rm -rf build`), known without running anything: the path
 * as written (quotes removed, `~` not expanded) or, for a word bash expands (`src/*.ts`, `/etc/$X`), its
 * static directory. Resolving it against the cwd is the rule subjects' job, not the (cached) analysis'.
 */
export interface PathArgument {
  readonly path: string
  readonly access: "read" | "write"
  /**
   * The glob after `path`, one segment (`.en*`) or several (`secret?/key.txt`), matched against what is under
   * `path` level by level, the way bash would.
   */
  readonly pattern?: string
  /**
   * The command takes everything under the path when it is a directory: with access write (`rm -r`, `chmod -R`,
   * `mv`'s sources, `find … -delete`'s start paths, `cp -r`'s destination, `tar -x`'s directory) it also writes
   * the protected entries inside it; with read,
   * it reads the whole tree (`cp -r`'s sources).
   */
  readonly recursive?: true
  /**
   * The names the command puts inside this path when it is a directory (`cp a/.bashrc ~`, `mv x/.claude .`
   * create `~/.bashrc`, `./.claude`): the sources' last segments. Whether it is a directory is the rule
   * subjects' question (they see the disk), so these come along unresolved.
   */
  readonly into?: ReadonlyArray<string>
  /**
   * A subject only by what is on disk where the command runs, which git looks at too: an operand without `--`
   * is a path when it is no revision and names something there (`git diff secrets`), a revision otherwise
   * (`git diff main`). "exists": only when something is at the path; "noOperandExists": only when none of the
   * command's "exists" paths is (`git grep x` and `git grep x main` search the whole tree, `git grep x src` src).
   */
  readonly onlyIf?: "exists" | "noOperandExists"
  /**
   * A path git takes from the top of the repository, not from where it runs (the `path` of `HEAD:path`): set to
   * the directory git runs in (`-C`'s, else `.`), from which the rule subjects find the repository's top.
   */
  readonly fromRepositoryTop?: string
}

/** One simple command of a line. */
export interface SimpleCommand {
  /** The command as rules match it: wrappers stripped, env prefixes dropped, words unquoted and re-quoted. */
  readonly text: string
  /** The words after stripping (name first); a word that is not static keeps its source text. */
  readonly words: ReadonlyArray<string>
  /** `NAME=value` prefixes, as written. */
  readonly env: ReadonlyArray<string>
  /** Wrappers that were stripped, outermost first (`timeout`, `nice`, …). */
  readonly wrappers: ReadonlyArray<string>
  /** Redirections that apply to this command (bash semantics: `a && b > f` belongs to `b`). */
  readonly redirects: ReadonlyArray<Redirect>
  readonly kind: CommandKind
  readonly readOnly: boolean
  /** The paths its arguments name, for the commands whose arguments are known to be paths. */
  readonly paths: ReadonlyArray<PathArgument>
  /**
   * Where the shell may be when it runs, as written relative to where the line starts (`.`, then every
   * `cd` target before it): a relative path argument means each of them joined with it.
   */
  readonly cwds: ReadonlyArray<string>
}

export interface Analysis {
  readonly commands: ReadonlyArray<SimpleCommand>
  /** Every redirection of the line that names a file (not `/dev/null`, not fd duplications). */
  readonly redirects: ReadonlyArray<Redirect>
  /** Why the line cannot be matched against rules safely; undefined when it can. */
  readonly opaque: string | undefined
  /** True when every command only reads, nothing writes a file, and nothing is hidden. */
  readonly readOnly: boolean
  /** True when the line moves the shell (`cd`, `pushd`, `popd`): the session's next cwd depends on it. */
  readonly changesDirectory: boolean
  /**
   * What an exit status of 1 reports when it is a result rather than a failure (`No matches found` for grep):
   * set only when the line is one command, or one pipeline ending in it, so the status is surely its own
   * (`make && grep x` can exit 1 because make failed).
   */
  readonly exitOneMeans: string | undefined
}

let parser: Parser | undefined
let loading: Promise<Parser> | undefined

// web-tree-sitter is loaded with the grammar, not at start-up: requiring it cost every start of the CLI ~8 ms.
const loadParser = async (): Promise<Parser> => {
  const { Language, Parser } = await ToolPlugin.importModule("web-tree-sitter", () => import("web-tree-sitter"))
  const require = createRequire(import.meta.url)
  const runtimeWasm = require.resolve("web-tree-sitter/tree-sitter.wasm")
  const bashWasm = path.join(path.dirname(require.resolve("tree-sitter-bash/package.json")), "tree-sitter-bash.wasm")
  await Parser.init({ locateFile: () => runtimeWasm })
  const language = await Language.load(bashWasm)
  const instance = new Parser()
  instance.setLanguage(language)
  parser = instance
  return instance
}

/** Loads the bash grammar once per process; `analyze` answers opaque until it has. */
export const load: Effect.Effect<void> = Effect.suspend(() => {
  if (parser !== undefined) return Effect.void
  loading ??= loadParser()
  const pending = loading
  return Effect.asVoid(Effect.promise(() => pending))
})

export const isLoaded = (): boolean => parser !== undefined

// ---------------------------------------------------------------------------------------------------------------
// Words

interface Word {
  /** The value bash would see, when it is known without running anything. */
  readonly value: string | undefined
  readonly source: string
  /** The syntax node, while the tree lives: path arguments need to know which parts bash expands. */
  readonly node?: SyntaxNode
}

const unescapeWord = (text: string): string => text.replace(/\\(.)/gs, "$1").replace(/\\\n/g, "")

const unescapeDouble = (text: string): string => text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c))

const staticValue = (node: SyntaxNode): string | undefined => {
  switch (node.type) {
    case "word":
    case "number":
      return unescapeWord(node.text)
    case "raw_string":
      return node.text.slice(1, -1)
    case "string": {
      let out = ""
      for (const child of node.namedChildren) {
        if (child === null) continue
        if (child.type !== "string_content") return undefined
        out += unescapeDouble(child.text)
      }
      return out
    }
    case "concatenation": {
      let out = ""
      for (const child of node.namedChildren) {
        if (child === null) continue
        const value = staticValue(child)
        if (value === undefined) return undefined
        out += value
      }
      return out
    }
    default:
      return undefined
  }
}

const wordOf = (node: SyntaxNode): Word => ({ value: staticValue(node), source: node.text, node })

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./~^-]+$/

/** A word as rules see it: bare when it needs no quoting, single-quoted otherwise; dynamic words as written. */
const render = (word: Word): string => {
  if (word.value === undefined) return word.source
  if (word.value !== "" && SAFE_WORD.test(word.value)) return word.value
  return `'${word.value.replace(/'/g, `'\\''`)}'`
}

// ---------------------------------------------------------------------------------------------------------------
// Classification

const SEARCH = new Set(["find", "grep", "egrep", "fgrep", "rg", "ag", "ack", "locate", "which", "whereis"])
const READ = new Set([
  "cat", "head", "tail", "less", "more", "wc", "stat", "file", "jq", "awk", "cut", "sort", "uniq", "tr"
])
const LIST = new Set(["ls", "tree", "du"])
const SILENT = new Set([
  "mv", "cp", "rm", "mkdir", "rmdir", "chmod", "chown", "chgrp", "touch", "ln", "cd", "export", "unset", "wait"
])
/** Commands that neither read nor write anything of note. */
const NEUTRAL = new Set([
  "echo", "printf", "pwd", "true", "false", ":", "test", "[", "date", "whoami", "id", "uname", "hostname", "basename",
  "dirname", "realpath", "readlink", "type", "printenv", "cd", "wait", "unset", "export", "diff", "cmp", "sha256sum",
  "md5sum", "nproc", "df", "free", "uptime", "seq", "sleep"
])
const SHELLS = new Set(["bash", "sh", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "busybox"])

const GIT_READ_ONLY = new Set([
  "status", "log", "diff", "show", "blame", "describe", "shortlog", "rev-parse", "ls-files", "ls-tree", "cat-file",
  "merge-base", "grep", "rev-list", "show-ref", "whatchanged", "reflog"
])

/** Env vars that change what a command runs or loads: a prefix setting one cannot be dropped from a rule. */
const DANGEROUS_ENV = new RegExp(
  "^(PATH|LD_\\w*|DYLD_\\w*|\\w*PAGER|EDITOR|VISUAL|BASH_ENV|ENV|PROMPT_COMMAND|IFS|SHELLOPTS|BASHOPTS|GIT_\\w+|" +
    "NODE_OPTIONS|NODE_PATH|PYTHON\\w*|PERL5?\\w*|RUBY\\w*|LESS\\w*|BROWSER|SSH_\\w+|HOME|ZDOTDIR|CDPATH|GLOBIGNORE)$"
)

export const kindOf = (name: string): CommandKind =>
  SEARCH.has(name)
    ? "search"
    : READ.has(name)
    ? "read"
    : LIST.has(name)
    ? "list"
    : SILENT.has(name)
    ? "silent"
    : "other"

const hasOption = (words: ReadonlyArray<string>, pattern: RegExp) => words.slice(1).some((w) => pattern.test(w))

const gitReadOnly = (words: ReadonlyArray<string>): boolean => {
  let i = 1
  while (i < words.length && words[i]!.startsWith("-")) {
    if (words[i] === "-C") i += 2
    else if (words[i] === "--no-pager" || words[i] === "--no-optional-locks") i += 1
    else return false
  }
  const sub = words[i]
  const rest = words.slice(i + 1)
  if (sub === undefined) return false
  if (rest.some((w) => /^--(output|ext-diff)/.test(w))) return false
  if (GIT_READ_ONLY.has(sub)) return sub !== "reflog" || rest.length === 0 || rest[0] === "show"
  switch (sub) {
    case "branch":
      return rest.every((w) => ["-a", "-r", "-v", "-vv", "--all", "--list", "--show-current", "--remotes"].includes(w))
    case "tag":
      return rest.length === 0 || rest.every((w) => ["-l", "--list"].includes(w))
    case "remote":
      return rest.length === 0 || (rest.length === 1 && rest[0] === "-v")
    case "stash":
      return rest[0] === "list"
    case "config":
      return rest.length > 0 && ["--get", "--list", "-l", "--get-all"].includes(rest[0]!)
    default:
      return false
  }
}

const readOnlyWords = (words: ReadonlyArray<string>): boolean => {
  const name = words[0]
  if (name === undefined) return true
  switch (name) {
    case "git":
      return gitReadOnly(words)
    case "find":
      return !hasOption(words, /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/)
    case "awk":
      // Program files (-f, gawk's -E, -i and @include) and extensions (-l, @load) run code this cannot see;
      // gawk takes long options by any unambiguous prefix (--fil, --ex, --in, --lo).
      return !hasOption(words, /^(-[^-]*[fEil]|--(fil|e|in|lo))/) &&
        !words.slice(1).some((w) => /system\s*\(|\||>|getline|@(include|load|nsinclude)/.test(w))
    case "sort":
      // `--o` and `--co` are the shortest prefixes GNU sort takes for `--output` and `--compress-program`.
      return !hasOption(words, /^(-o|--o|--co)/)
    case "tree":
      return !hasOption(words, /^-o/)
    case "rg":
      return !hasOption(words, /^--pre/)
    case "ack":
    case "ag":
      return !hasOption(words, /pager/)
    case "uniq":
      return words.slice(1).filter((w) => !w.startsWith("-")).length <= 1
    case "command":
      return words[1] === "-v" || words[1] === "-V"
    default:
      return SEARCH.has(name) || READ.has(name) || LIST.has(name) || NEUTRAL.has(name)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Wrappers

interface Stripped {
  readonly words: ReadonlyArray<Word>
  readonly wrappers: ReadonlyArray<string>
  readonly opaque?: string
}

const valueOf = (word: Word | undefined): string | undefined => word?.value

/** Skips `timeout`'s options and duration. */
const afterTimeout = (words: ReadonlyArray<Word>): number | undefined => {
  let i = 1
  while (i < words.length) {
    const w = valueOf(words[i])
    if (w === undefined) return undefined
    if (w === "--foreground" || w === "--preserve-status" || w === "-v" || w === "--verbose") i += 1
    else if (w === "-s" || w === "-k" || w === "--signal" || w === "--kill-after") i += 2
    else if (/^(-s|-k).+|^--(signal|kill-after)=/.test(w)) i += 1
    else if (w.startsWith("-")) return undefined
    else return i + 1
  }
  return undefined
}

const afterNice = (words: ReadonlyArray<Word>): number | undefined => {
  let i = 1
  while (i < words.length) {
    const w = valueOf(words[i])
    if (w === undefined) return undefined
    if (w === "-n" || w === "--adjustment") i += 2
    else if (/^-n?-?\d+$|^--adjustment=/.test(w)) i += 1
    else if (w.startsWith("-")) return undefined
    else return i
  }
  return i
}

const afterStdbuf = (words: ReadonlyArray<Word>): number | undefined => {
  let i = 1
  while (i < words.length) {
    const w = valueOf(words[i])
    if (w === undefined) return undefined
    if (w === "-i" || w === "-o" || w === "-e") i += 2
    else if (/^-[ioe].+|^--(input|output|error)=/.test(w)) i += 1
    else if (w.startsWith("-")) return undefined
    else return i
  }
  return i
}

const afterEnv = (words: ReadonlyArray<Word>): number | undefined => {
  let i = 1
  while (i < words.length) {
    const w = valueOf(words[i])
    if (w === undefined) return undefined
    if (w === "-i" || w === "-" || w === "--ignore-environment") i += 1
    else if (w === "-u" || w === "--unset") i += 2
    else if (w.startsWith("--unset=")) i += 1
    else if (w.startsWith("-")) return undefined
    else if (/^[A-Za-z_]\w*=/.test(w)) {
      if (DANGEROUS_ENV.test(w.slice(0, w.indexOf("=")))) return undefined
      i += 1
    } else return i
  }
  return i
}

/** Strips wrappers until the real command; an unknown wrapper option makes the command opaque. */
const stripWrappers = (words: ReadonlyArray<Word>): Stripped => {
  const wrappers: Array<string> = []
  let current = words
  for (let guard = 0; guard < 20; guard++) {
    const name = valueOf(current[0])
    let skip: number | undefined
    switch (name) {
      case "timeout":
        skip = afterTimeout(current)
        break
      case "time":
        skip = valueOf(current[1]) === "-p" ? 2 : 1
        break
      case "nice":
        skip = afterNice(current)
        break
      case "nohup":
        skip = 1
        break
      case "stdbuf":
        skip = afterStdbuf(current)
        break
      case "builtin":
        skip = 1
        break
      case "command": {
        const first = valueOf(current[1])
        if (first === "-v" || first === "-V") return { words: current, wrappers }
        skip = first === "-p" ? 2 : 1
        break
      }
      case "env":
        if (current.length === 1) return { words: current, wrappers }
        skip = afterEnv(current)
        break
      case "xargs":
        if (current[1] !== undefined && (current[1].value === undefined || current[1].value.startsWith("-"))) {
          return { words: current, wrappers, opaque: "xargs with options runs a command the analysis cannot see" }
        }
        skip = 1
        break
      default:
        return { words: current, wrappers }
    }
    if (skip === undefined) {
      return { words: current, wrappers, opaque: `${name} has options the analysis does not understand` }
    }
    wrappers.push(name!)
    current = current.slice(skip)
    if (current.length === 0) return { words: current, wrappers }
  }
  return { words: current, wrappers, opaque: "too many nested wrappers" }
}

// ---------------------------------------------------------------------------------------------------------------
// Path arguments

type Access = "read" | "write"

/** How a command's arguments name paths; an option not listed is a flag without a value. */
interface PathSyntax {
  /** What the command does to its operands. */
  readonly access: Access
  /** Options whose value is the next word (or the rest of a short option cluster): `head -n 5`. */
  readonly values?: ReadonlySet<string>
  /** Options whose value is a path, and what the command does to it: `grep -f pats`, `sort -o out`. */
  readonly pathValues?: Readonly<Record<string, Access>>
  /** Options taking two words, the second a path when an access is given: `jq --arg n v`, `--slurpfile n f`. */
  readonly pairs?: Readonly<Record<string, Access | undefined>>
  /** The first operand is not a path (a pattern, program, mode or owner) unless one of these options was given. */
  readonly program?: ReadonlySet<string>
  /** Only the first operand is a path (`cd dir`, `source file args…`). */
  readonly firstOnly?: boolean
  /** Of two or more operands the last is written (`cp a b`), unless a target directory option was given. */
  readonly lastWrites?: boolean
  /** Where operands stop being paths (`jq --args`). */
  readonly stop?: ReadonlySet<string>
  /** Options that make the command write every operand's whole tree (`rm -r`, `chmod -R`). */
  readonly recursive?: ReadonlySet<string>
  /** Every operand but the destination (the last, or all with `-t`) goes whole with its tree (`mv`). */
  readonly movesSources?: true
  /** Options that make every operand written (`install -d`). */
  readonly writesAll?: ReadonlySet<string>
  /** The command always takes its operands' whole trees (`rg`, `du`). */
  readonly wholeTrees?: true
  /** Without a path operand, a command taking trees takes the working directory's (`grep -r x`, `rg x`, `du`). */
  readonly treeDefault?: true
  /** Without a path operand, a piped input is searched instead of the working directory (`git log | rg x`). */
  readonly searchesPipe?: true
  /** Flags without a value the command's own rules read (`curl -O`), for their long forms' prefixes. */
  readonly flags?: ReadonlySet<string>
}

const wordSet = (list: string): ReadonlySet<string> => new Set(list.split(" "))
const TARGET_DIRECTORY: Readonly<Record<string, Access>> = { "-t": "write", "--target-directory": "write" }
const GREP_PROGRAM = wordSet("-e -f --regexp --file")
const READS: PathSyntax = { access: "read" }
const WRITES: PathSyntax = { access: "write" }
const HEAD_TAIL: PathSyntax = {
  access: "read",
  values: wordSet("-n -c --lines --bytes --pid -s --sleep-interval --max-unchanged-stats")
}
const SUMS: PathSyntax = { access: "read", pathValues: { "-c": "read" } }
const RECURSIVE = wordSet("-R --recursive")
const OWNER: PathSyntax = {
  access: "write",
  values: wordSet("--from"),
  recursive: RECURSIVE,
  pathValues: { "--reference": "read" },
  program: wordSet("--reference")
}

const GREP: PathSyntax = {
  access: "read",
  // `-r` reads every file under its operands (the working directory without one), as `-d recurse` does.
  recursive: wordSet("-r -R --recursive --dereference-recursive"),
  treeDefault: true,
  values: wordSet(
    "-e -m -A -B -C -d -D --regexp --max-count --after-context --before-context --context --devices --directories " +
      "--binary-files --label --include --exclude --exclude-dir"
  ),
  pathValues: { "-f": "read", "--file": "read", "--exclude-from": "read" },
  program: GREP_PROGRAM
}

/** The commands whose arguments are paths (Claude Code checks the same ones), by name. */
const PATH_SYNTAX: ReadonlyMap<string, PathSyntax> = new Map(Object.entries({
  cat: READS,
  less: READS,
  more: READS,
  head: HEAD_TAIL,
  tail: HEAD_TAIL,
  wc: { access: "read", pathValues: { "--files0-from": "read" } },
  stat: { access: "read", values: wordSet("-c --format --printf") },
  file: {
    access: "read",
    values: wordSet("-F -P -e --separator --parameter --exclude"),
    pathValues: { "-m": "read", "-f": "read", "--magic-file": "read", "--files-from": "read" }
  },
  jq: {
    access: "read",
    values: wordSet("--indent -L"),
    pathValues: { "-f": "read", "--from-file": "read" },
    pairs: { "--arg": undefined, "--argjson": undefined, "--slurpfile": "read", "--rawfile": "read" },
    program: wordSet("-f --from-file"),
    stop: wordSet("--args --jsonargs")
  },
  awk: {
    access: "read",
    values: wordSet("-F -v --field-separator --assign"),
    pathValues: { "-f": "read", "--file": "read", "-E": "read", "--exec": "read" },
    program: wordSet("-f --file -E --exec")
  },
  cut: { access: "read", values: wordSet("-b -c -d -f --bytes --characters --delimiter --fields --output-delimiter") },
  sort: {
    access: "read",
    values: wordSet("-k -t -S -T --key --field-separator --buffer-size --temporary-directory --batch-size --parallel"),
    pathValues: { "-o": "write", "--output": "write", "--files0-from": "read", "--random-source": "read" }
  },
  uniq: { access: "read", values: wordSet("-f -s -w --skip-fields --skip-chars --check-chars"), lastWrites: true },
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  rg: {
    access: "read",
    values: wordSet(
      "-e -g -t -T -m -A -B -C -M -j -r -E -d --regexp --glob --iglob --type --type-not --type-add --type-clear " +
        "--max-count --max-depth --max-columns --max-filesize --threads --replace --encoding --sort --sortr --pre " +
        "--pre-glob --colors --context-separator --path-separator --field-match-separator --field-context-separator " +
        "--engine --dfa-size-limit --regex-size-limit --hyperlink-format"
    ),
    pathValues: { "-f": "read", "--file": "read", "--ignore-file": "read" },
    // `rg --files dir` lists files: no pattern comes first.
    program: wordSet("-e -f --regexp --file --files --type-list"),
    wholeTrees: true,
    treeDefault: true,
    searchesPipe: true
  },
  ag: {
    access: "read",
    values: wordSet("-A -B -C -G -g -m --ignore --ignore-dir --depth --pager --file-search-regex"),
    pathValues: { "-p": "read", "--path-to-ignore": "read" },
    program: wordSet("-g"),
    wholeTrees: true,
    treeDefault: true,
    searchesPipe: true
  },
  ack: {
    access: "read",
    values: wordSet("-A -B -C -m -g --match --type-set --ignore-dir --ignore-file --output --pager"),
    program: wordSet("-f -g --match"),
    wholeTrees: true,
    treeDefault: true,
    searchesPipe: true
  },
  ls: {
    access: "read",
    values: wordSet(
      "-I -w -T --ignore --hide --width --tabsize --block-size --format --sort --time --time-style --quoting-style " +
        "--indicator-style"
    )
  },
  tree: {
    access: "read",
    values: wordSet("-L -P -I -H -T --charset --filelimit --timefmt --sort"),
    pathValues: { "-o": "write", "--fromfile": "read" }
  },
  du: {
    access: "read",
    values: wordSet("-d -B -t --max-depth --block-size --threshold --exclude --time-style"),
    pathValues: { "-X": "read", "--exclude-from": "read", "--files0-from": "read" },
    wholeTrees: true,
    treeDefault: true
  },
  diff: {
    access: "read",
    values: wordSet(
      "-C -U -F -I -x -L -S -D -W --label --ignore-matching-lines --exclude --show-function-line --starting-file " +
        "--line-format --old-line-format --new-line-format --unchanged-line-format --old-group-format " +
        "--new-group-format --unchanged-group-format --changed-group-format --horizon-lines --tabsize --width --ifdef"
    ),
    pathValues: { "-X": "read", "--exclude-from": "read", "--from-file": "read", "--to-file": "read" }
  },
  cmp: { access: "read", values: wordSet("-i -n --ignore-initial --bytes") },
  strings: { access: "read", values: wordSet("-n -t -e -T --bytes --radix --encoding --target") },
  od: { access: "read", values: wordSet("-A -j -N -t -w -S --address-radix --skip-bytes --read-bytes --format") },
  hexdump: { access: "read", values: wordSet("-n -s -e"), pathValues: { "-f": "read" } },
  base64: { access: "read", values: wordSet("-w --wrap") },
  nl: { access: "read", values: wordSet("-b -d -f -h -i -l -n -s -v -w") },
  md5sum: SUMS,
  sha1sum: SUMS,
  sha224sum: SUMS,
  sha256sum: SUMS,
  sha384sum: SUMS,
  sha512sum: SUMS,
  b2sum: SUMS,
  source: { access: "read", firstOnly: true },
  ".": { access: "read", firstOnly: true },
  cd: { access: "read", firstOnly: true },
  pushd: { access: "read", firstOnly: true },
  rm: { access: "write", recursive: wordSet("-r -R --recursive") },
  rmdir: WRITES,
  mkdir: { access: "write", values: wordSet("-m --mode") },
  touch: { access: "write", values: wordSet("-d -t --date"), pathValues: { "-r": "read", "--reference": "read" } },
  chmod: {
    access: "write",
    pathValues: { "--reference": "read" },
    program: wordSet("--reference"),
    recursive: RECURSIVE
  },
  chown: OWNER,
  chgrp: OWNER,
  mv: { access: "write", values: wordSet("-S --suffix"), pathValues: TARGET_DIRECTORY, movesSources: true },
  cp: {
    access: "read",
    values: wordSet("-S --suffix"),
    pathValues: TARGET_DIRECTORY,
    lastWrites: true,
    recursive: wordSet("-r -R --recursive -a --archive")
  },
  ln: { access: "read", values: wordSet("-S --suffix"), pathValues: TARGET_DIRECTORY, lastWrites: true },
  install: {
    access: "read",
    values: wordSet("-m -o -g -S --mode --owner --group --suffix --strip-program"),
    pathValues: TARGET_DIRECTORY,
    lastWrites: true,
    writesAll: wordSet("-d --directory")
  },
  tee: WRITES,
  truncate: { access: "write", values: wordSet("-s --size"), pathValues: { "-r": "read", "--reference": "read" } },
  curl: {
    access: "read",
    values: wordSet(
      "-A -d -e -F -H -m -r -u -U -w -x -X -y -Y -z -C -Q -t --data --data-raw --data-binary --data-urlencode " +
        "--data-ascii --json --form --form-string --header --user-agent --user --request --referer --variable " +
        "--url-query --proxy-header --cert-type --key-type --proxy-cert-type --proxy-key-type --pass --proxy-pass " +
        "--max-time --connect-timeout --retry --retry-delay --retry-max-time --range --proxy --proxy-user " +
        "--write-out --url --time-cond --continue-at --quote --telnet-option --limit-rate --max-filesize " +
        "--speed-limit --speed-time --resolve --connect-to --interface --dns-servers --oauth2-bearer --proto " +
        "--proto-redir --max-redirs --expect100-timeout --happy-eyeballs-timeout-ms --local-port --keepalive-time"
    ),
    pathValues: {
      "-o": "write", "--output": "write", "--output-dir": "write", "-D": "write", "--dump-header": "write",
      "-c": "write", "--cookie-jar": "write", "--trace": "write", "--trace-ascii": "write", "--stderr": "write",
      "--libcurl": "write", "--etag-save": "write", "--hsts": "write", "--alt-svc": "write", "-T": "read",
      "--upload-file": "read", "--etag-compare": "read", "--netrc-file": "read", "-K": "read", "--config": "read",
      "-b": "read", "--cookie": "read", "--cacert": "read", "--capath": "read", "-E": "read", "--cert": "read",
      "--key": "read", "--crlfile": "read", "--pinnedpubkey": "read", "--proxy-cacert": "read",
      "--proxy-capath": "read", "--proxy-cert": "read", "--proxy-key": "read", "--proxy-crlfile": "read",
      "--proxy-pinnedpubkey": "read"
    },
    flags: wordSet("-O -J --remote-name --remote-name-all --remote-header-name --create-dirs")
  },
  wget: {
    access: "read",
    values: wordSet(
      "-t -T -w -U -l -A -R -D -I -X -Q -B -e --tries --timeout --wait --user-agent --header --level --accept " +
        "--reject --domains --include-directories --exclude-directories --quota --base --execute --user --password " +
        "--http-user --http-password --post-data --method --body-data --limit-rate --referer --dns-timeout " +
        "--connect-timeout --read-timeout --waitretry --cut-dirs --default-page --restrict-file-names"
    ),
    pathValues: {
      "-O": "write", "--output-document": "write", "-P": "write", "--directory-prefix": "write", "-o": "write",
      "--output-file": "write", "-a": "write", "--append-output": "write", "--save-cookies": "write",
      "--load-cookies": "read", "-i": "read", "--input-file": "read", "--post-file": "read", "--body-file": "read",
      "--config": "read"
    },
    // Recursive retrievals write trees; -O - writes to stdout.
    recursive: wordSet("-r -m -p -x --recursive --mirror --page-requisites --force-directories"),
    flags: wordSet("--content-disposition --trust-server-names")
  },
  sed: {
    access: "read",
    values: wordSet("-e -l --expression --line-length"),
    pathValues: { "-f": "read", "--file": "read" },
    program: wordSet("-e -f --expression --file")
  },
}))

/** chmod's symbolic modes that look like options: `chmod -x file` removes execute permission. */
const CHMOD_MODE = /^-[rwxXst]+$/

/** The long options a command's syntax knows, by command name (see `longOption`). */
const LONG_OPTIONS = new Map<string, ReadonlyArray<string>>()

/**
 * The long option `written` stands for: GNU getopt takes any unambiguous prefix (`rm --recu` is `--recursive`,
 * `cp --target=d` is `--target-directory=d`). Matched against the options the table knows, which the command
 * has too: a prefix unique among the command's options is unique among these; one ambiguous here is
 * ambiguous there too, and the command refuses it.
 */
const longOption = (name: string, syntax: PathSyntax, written: string): string => {
  let known = LONG_OPTIONS.get(name)
  if (known === undefined) {
    const all = [
      ...(syntax.values ?? []), ...Object.keys(syntax.pathValues ?? {}), ...Object.keys(syntax.pairs ?? {}),
      ...(syntax.program ?? []), ...(syntax.recursive ?? []), ...(syntax.writesAll ?? []), ...(syntax.flags ?? []),
      ...(name === "sed" ? ["--in-place"] : [])
    ]
    known = [...new Set(all.filter((option) => option.startsWith("--")))]
    LONG_OPTIONS.set(name, known)
  }
  if (known.includes(written)) return written
  const candidates = known.filter((option) => option.startsWith(written))
  return candidates.length === 1 ? candidates[0]! : written
}

/** A path word, what the command does to it, and whether it does that to the whole tree under it. */
type PathWord = readonly [
  Word,
  Access,
  recursive?: boolean | undefined,
  into?: ReadonlyArray<string> | undefined,
  onlyIf?: PathArgument["onlyIf"] | undefined,
  /**
   * For `REV:path` objects: the path is the repository top's, found from this directory (where git runs;
   * see `PathArgument.fromRepositoryTop`).
   */
  fromTop?: string | undefined
]

/** The words of a command that are paths, with what it does to each; `find` and `dd` have their own syntax. */
const pathWords = (name: string, words: ReadonlyArray<Word>, piped: boolean): Array<PathWord> => {
  if (name === "find") return findPaths(words)
  if (name === "dd") return ddPaths(words)
  if (name === "tar") return tarPaths(words)
  if (name === "git") return gitPaths(words)
  if (name === "unzip") return unzipPaths(words)
  const syntax = PATH_SYNTAX.get(name)
  if (syntax === undefined) return []
  const out: Array<PathWord> = []
  const operands: Array<Word> = []
  let programGiven = false
  let targetGiven = false
  const targets: Array<number> = []
  let inPlace = false
  let options = true
  let recursive = syntax.wholeTrees === true
  /** Every option given (long ones as the table knows them), and the path values with their options. */
  const flags = new Set<string>()
  const given: Array<readonly [option: string, value: Word, access: Access]> = []
  /** Every option value, for the commands whose values may name files (`curl -d @file`). */
  const valued: Array<readonly [option: string, value: Word]> = []
  const takeValue = (option: string, value: Word | undefined) => {
    if (value !== undefined) valued.push([option, value])
    if (syntax.program?.has(option)) programGiven = true
    if (syntax === GREP && (option === "-d" || option === "--directories") && value?.value === "recurse") {
      recursive = true
    }
    const access = syntax.pathValues?.[option]
    if (access === undefined || value === undefined) return
    given.push([option, value, access])
    if (option === "-t" || option === "--target-directory") {
      targetGiven = true
      targets.push(out.length)
    }
    out.push([value, access])
  }
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!
    const text = word.value ?? word.source
    if (syntax.stop?.has(text)) break
    if (!options || !text.startsWith("-") || text === "-" || (name === "chmod" && CHMOD_MODE.test(text))) {
      operands.push(word)
      continue
    }
    if (text === "--") {
      options = false
      continue
    }
    if (text.startsWith("--")) {
      const eq = text.indexOf("=")
      const option = longOption(name, syntax, eq === -1 ? text : text.slice(0, eq))
      flags.add(option)
      if (option === "--in-place" || syntax.writesAll?.has(option)) inPlace = true
      if (syntax.recursive?.has(option)) recursive = true
      if (syntax.pairs !== undefined && option in syntax.pairs) {
        const access = syntax.pairs[option]
        if (access !== undefined && words[i + 2] !== undefined) out.push([words[i + 2]!, access])
        i += 2
      } else if (eq !== -1) {
        takeValue(option, { value: text.slice(eq + 1), source: text.slice(eq + 1) })
      } else if (syntax.values?.has(option) || syntax.pathValues?.[option] !== undefined) {
        takeValue(option, words[++i])
      } else if (syntax.program?.has(option)) {
        programGiven = true
      }
      continue
    }
    // A cluster of short options: the first that takes a value takes the rest of the word, or the next word.
    for (let j = 1; j < text.length; j++) {
      const option = `-${text[j]}`
      flags.add(option)
      if (name === "sed" && option === "-i") {
        inPlace = true
        break
      }
      if (syntax.recursive?.has(option)) recursive = true
      if (syntax.writesAll?.has(option)) inPlace = true
      if (syntax.values?.has(option) || syntax.pathValues?.[option] !== undefined) {
        const rest = text.slice(j + 1)
        takeValue(option, rest === "" ? words[++i] : { value: rest, source: rest })
        break
      }
      if (syntax.program?.has(option)) programGiven = true
    }
  }
  if (name === "curl") return [...curlPaths(given, flags, operands), ...curlUploads(valued)]
  if (name === "wget") return wgetPaths(given, flags, operands)
  const paths = syntax.program !== undefined && !programGiven ? operands.slice(1) : operands
  if (recursive && syntax.treeDefault && paths.length === 0 && !(piped && syntax.searchesPipe)) {
    paths.push({ value: ".", source: "." })
  }
  const access: Access = inPlace ? "write" : syntax.access
  if (syntax.firstOnly) {
    if (paths[0] !== undefined) out.push([paths[0], access])
    return out
  }
  // `cp -r src dst` reads src's whole tree and may write anything it holds anywhere under dst (`cp -r evil/. .`,
  // `cp -rT sub .`, `cp -r sub/.git .` replace ./.git), so dst, or the `-t` directory, is written whole.
  if (recursive) for (const index of targets) out[index] = [out[index]![0], out[index]![1], true]
  // What lands inside a destination directory: each source's last segment. A source whose name the analysis
  // cannot know (a glob, a variable) could be anything, so its destination is then written whole.
  const moves = (syntax.lastWrites === true || syntax.movesSources === true) && !inPlace
  const sources = moves ? (targetGiven ? paths : paths.slice(0, -1)) : []
  const names: Array<string> = []
  let unknownName = false
  for (const source of sources) {
    const name = source.value === undefined || /[*?[{]/.test(source.source) ? undefined : path.posix.basename(source.value)
    if (name === undefined) unknownName = true
    else if (name !== "." && name !== ".." && name !== "" && name !== "/") names.push(name)
  }
  const into = names.length > 0 ? names : undefined
  if (moves) {
    for (const index of targets) {
      const [word, targetAccess, whole] = out[index]!
      out[index] = [word, targetAccess, whole === true || unknownName, into]
    }
  }
  paths.forEach((word, index) => {
    const last = !targetGiven && paths.length > 1 && index === paths.length - 1
    const written = syntax.lastWrites === true && last
    const whole = recursive || (syntax.movesSources === true && (targetGiven || index < paths.length - 1))
    const destination = moves && last
    out.push(destination ? [word, "write", whole || unknownName, into] : [word, written ? "write" : access, whole])
  })
  return out
}

type GivenPath = readonly [option: string, value: Word, access: Access]

/** The file a URL names when a downloader saves it under its own name: its last segment, query dropped. */
const urlNames = (urls: ReadonlyArray<Word>): ReadonlyArray<string> | undefined => {
  const names: Array<string> = []
  for (const url of urls) {
    if (url.value === undefined || /[*?[{]/.test(url.value)) return undefined
    const withQuery = url.value.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, "").replace(/#.*/, "")
    const plain = withQuery.replace(/\?.*/, "")
    for (const candidate of [plain, withQuery]) {
      const last = candidate.slice(candidate.lastIndexOf("/") + 1)
      let decoded = last
      try {
        decoded = decodeURIComponent(last)
      } catch {
        // Not valid percent-encoding: the downloader keeps it as written.
      }
      for (const name of [last, decoded]) if (name !== "" && !names.includes(name)) names.push(name)
    }
  }
  return names
}

/** `relative` under `directory` when there is one and `relative` is relative. */
const under = (directory: Word | undefined, relative: Word): Word =>
  directory?.value === undefined || relative.value === undefined || relative.value.startsWith("/") ||
    relative.value.startsWith("~")
    ? relative
    : { value: `${directory.value}/${relative.value}`, source: `${directory.source}/${relative.source}` }

/**
 * What curl writes: `-o` files (under `--output-dir`), `-O`'s files named after the URLs in the output
 * directory or `.` (the whole directory when the names are unknown: `-J` takes the server's), and the files
 * of the other options (`-D`, `-c`, `--trace`, …); `-T` is read. `-K` is read, its options made opaque later.
 */
const curlPaths = (
  given: ReadonlyArray<GivenPath>,
  flags: ReadonlySet<string>,
  urls: ReadonlyArray<Word>
): Array<PathWord> => {
  const directory = given.findLast(([option]) => option === "--output-dir")?.[1]
  const out: Array<PathWord> = []
  for (const [option, value, access] of given) {
    if (option === "--output-dir") continue
    if (option !== "-o" && option !== "--output") {
      if (access === "read") out.push(...curlReads(option, value))
      else out.push([value, access])
      continue
    }
    // `-o '#1/x'` is filled from the URL's `{a,b}` or `[1-9]` glob: a name the analysis cannot know.
    const file = value.value !== undefined && /#\d/.test(value.value) ? { value: undefined, source: value.source } : value
    out.push([under(directory, file), access])
  }
  const remote = ["-O", "--remote-name", "--remote-name-all"].some((flag) => flags.has(flag))
  if (remote || directory !== undefined) {
    const names = flags.has("-J") || flags.has("--remote-header-name") ? undefined : urlNames(urls)
    const target = directory ?? { value: ".", source: "." }
    const into = names !== undefined && names.length > 0 ? names : undefined
    out.push(remote ? [target, "write", names === undefined, into] : [target, "write"])
  }
  return out
}

/** `value`'s `:`-separated parts; `\:` is a colon inside one. */
const colonParts = (value: string): Array<string> =>
  value.split(/(?<!\\):/).map((part) => part.replace(/\\:/g, ":"))

/**
 * The files behind one of curl's reading options: `-b`'s value is a cookie file unless it holds `=` (then it is
 * the cookies); `--cert file:passphrase` reads the file (a `pkcs11:` URI none); `--capath a:b` reads each
 * directory whole; `--pinnedpubkey sha256//…` is hashes, no file.
 */
const curlReads = (option: string, value: Word): Array<PathWord> => {
  const text = value.value
  if (option === "-b" || option === "--cookie") {
    return (text ?? value.source).includes("=") ? [] : [[value, "read"]]
  }
  if (text === undefined) return [[value, "read"]]
  if (/^(-E|--cert|--proxy-cert|--key|--proxy-key)$/.test(option)) {
    if (text.startsWith("pkcs11:")) return []
    if (option.endsWith("cert")) return [[cutWord(value, colonParts(text)[0]), "read"]]
  }
  if (option === "--capath" || option === "--proxy-capath") {
    return colonParts(text).map((directory): PathWord => [cutWord(value, directory), "read", true])
  }
  if (option.endsWith("pinnedpubkey") && text.startsWith("sha256//")) return []
  return [[value, "read"]]
}

/** curl's options whose value `@file` (or a form field's `name=@file`, `name=<file`) sends a file. */
const CURL_DATA = wordSet("-d --data --data-binary --data-urlencode --data-ascii --json --url-query --variable")
const CURL_FORM = wordSet("-F --form")
/** curl's options that read their value from a file given as `@file` (`-H @headers.txt`, `-w @format`). */
const CURL_AT_FILE = wordSet("-H --header --proxy-header -w --write-out")

/** The files curl sends: `-d @secret`, `--data-urlencode name@file`, `-F 'f=@key;type=text/plain'`. */
const curlUploads = (valued: ReadonlyArray<readonly [string, Word]>): Array<PathWord> => {
  const out: Array<PathWord> = []
  for (const [option, word] of valued) {
    const text = word.value
    if (text === undefined) {
      // `-d "$BODY"` sends a value; `-d @"$F"` a file the analysis cannot know.
      if ((CURL_DATA.has(option) || CURL_FORM.has(option)) && /[@<]/.test(word.source)) out.push([word, "read"])
      else if (CURL_AT_FILE.has(option) && /^["']?@/.test(word.source)) out.push([word, "read"])
      continue
    }
    const file = CURL_DATA.has(option)
      ? /^[^=@]*@(.+)$/.exec(text)?.[1]
      : CURL_FORM.has(option)
      ? /^[^=]*=[@<]([^;]+)/.exec(text)?.[1]
      : CURL_AT_FILE.has(option)
      ? /^@(.+)$/.exec(text)?.[1]
      : undefined
    if (file !== undefined) out.push([{ value: file, source: file }, "read"])
  }
  return out
}

/**
 * What wget writes: the `-O` file, else each URL's file (named after it) in the `-P` directory or `.`, that
 * directory whole when the names are unknown or the retrieval is recursive; its log and cookie files.
 */
const wgetPaths = (
  given: ReadonlyArray<GivenPath>,
  flags: ReadonlySet<string>,
  urls: ReadonlyArray<Word>
): Array<PathWord> => {
  const directory = given.findLast(([option]) => option === "-P" || option === "--directory-prefix")?.[1]
  const out: Array<PathWord> = []
  for (const [option, value, access] of given) {
    if (option !== "-P" && option !== "--directory-prefix") out.push([value, access])
  }
  if (given.some(([option]) => option === "-O" || option === "--output-document")) return out
  const syntax = PATH_SYNTAX.get("wget")!
  const tree = [...flags].some((flag) => syntax.recursive?.has(flag) || syntax.flags?.has(flag)) ||
    given.some(([option]) => option === "-i" || option === "--input-file")
  const names = tree ? undefined : urlNames(urls)
  const into = names !== undefined && names.length > 0 ? names : undefined
  out.push([directory ?? { value: ".", source: "." }, "write", names === undefined, into])
  return out
}

/** git's options before the sub-command that take the next word (`git -c k=v show`, `git --git-dir d log`). */
const GIT_GLOBAL_VALUES = new Set([
  "-c", "--config-env", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds"
])

/** Commands whose path arguments `pathWords` reads with their own syntax rather than a `PathSyntax`. */
const OWN_SYNTAX = new Set(["find", "dd", "tar", "git", "unzip"])

/** Where git's sub-command is among its words, and the `-C` directory its relative paths start from. */
const gitSubcommand = (
  words: ReadonlyArray<Word>
): { readonly index: number; readonly directory: Word | undefined } => {
  let directory: Word | undefined
  let i = 1
  for (; i < words.length; i++) {
    const text = words[i]!.value ?? words[i]!.source
    if (text === "-C" && words[i + 1] !== undefined) {
      directory = directory === undefined ? words[++i] : under(directory, words[++i]!)
    } else if (GIT_GLOBAL_VALUES.has(text)) i++
    else if (!text.startsWith("-")) break
  }
  return { index: i, directory }
}

/** An option of a git sub-command that names a program for git to run, or that makes it run one. */
interface GitRunnerOption {
  /** Its long name; git takes any prefix of it (`--upl`; an ambiguous one fails) of `min` (3) or more characters. */
  readonly long: string
  readonly min?: number
  /** Only the name itself (a shell script's parsing: filter-branch). */
  readonly exact?: true
  readonly short?: string
  /** Its value is optional, so only one stuck to it counts (`-O<pager>`, `--open-files-in-pager=<pager>`). */
  readonly stuck?: true
  /** What it does, after the option's name; "runs the given command" when not given. */
  readonly does?: string
}

interface GitRunners {
  readonly options: ReadonlyArray<GitRunnerOption>
  /** The sub-command's short options that take a value: the rest of a cluster (`-jx`) is that value. */
  readonly shortValues: string
}

const UPLOAD_PACK: GitRunnerOption = { long: "--upload-pack" }
const RECEIVE_PACK: GitRunnerOption = { long: "--receive-pack" }
const EXEC: GitRunnerOption = { long: "--exec" }
const TEMPLATE: GitRunnerOption = { long: "--template", does: "copies hooks that git runs later" }
const FILTER_BRANCH_FILTERS = ["env", "tree", "index", "parent", "msg", "commit", "tag-name"].map(
  (name): GitRunnerOption => ({ long: `--${name}-filter`, exact: true })
)

/**
 * The options that make a git sub-command run a program named on the line, which no prefix rule for the
 * sub-command should cover (`Bash(git fetch:*)` is not `git fetch --upload-pack=./evil`). The tools of
 * difftool's and mergetool's `--tool` and the hooks git runs come from the repository's configuration, which
 * `git -c` (and clone's) covers. `bisect run` and `submodule foreach` are below.
 */
const GIT_RUNNERS: ReadonlyMap<string, GitRunners> = new Map([
  ["fetch", { options: [UPLOAD_PACK], shortValues: "jo" }],
  ["pull", { options: [UPLOAD_PACK], shortValues: "josXS" }],
  ["ls-remote", { options: [UPLOAD_PACK, EXEC], shortValues: "o" }],
  ["fetch-pack", { options: [UPLOAD_PACK, EXEC], shortValues: "" }],
  ["clone", {
    options: [
      { ...UPLOAD_PACK, short: "u" },
      TEMPLATE,
      { long: "--config", short: "c", does: "can make git run other commands" }
    ],
    shortValues: "obucj"
  }],
  ["init", { options: [TEMPLATE], shortValues: "b" }],
  ["push", { options: [RECEIVE_PACK, EXEC], shortValues: "o" }],
  ["send-pack", { options: [RECEIVE_PACK, EXEC], shortValues: "" }],
  ["archive", { options: [EXEC], shortValues: "o" }],
  ["rebase", { options: [{ ...EXEC, short: "x" }], shortValues: "sXxCS" }],
  ["difftool", { options: [{ long: "--extcmd", short: "x" }], shortValues: "tx" }],
  ["filter-branch", { options: [...FILTER_BRANCH_FILTERS, { long: "--setup", exact: true }], shortValues: "" }],
  ["grep", { options: [{ long: "--open-files-in-pager", short: "O", stuck: true }], shortValues: "efABCm" }],
  ["send-email", {
    // `--to` and `--cc` are options of their own: only `--to-`, `--cc-` and longer are the command options.
    options: [
      { long: "--to-cmd", min: 5 },
      { long: "--cc-cmd", min: 5 },
      { long: "--header-cmd" },
      { long: "--sendmail-cmd" },
      { long: "--smtp-server" }
    ],
    shortValues: ""
  }]
])

/** How the word gives `option`, as the reason names it (`-x`, `--exec`), or undefined when it does not. */
const givenAs = (word: string, option: GitRunnerOption, shortValues: string): string | undefined => {
  if (word.startsWith("--")) {
    const equals = word.indexOf("=")
    const name = equals < 0 ? word : word.slice(0, equals)
    if (option.stuck === true && equals < 0) return undefined
    const matches = option.exact === true
      ? name === option.long
      : name.length >= (option.min ?? 3) && option.long.startsWith(name)
    return matches ? option.long : undefined
  }
  if (option.short === undefined || !word.startsWith("-")) return undefined
  for (let i = 1; i < word.length; i++) {
    const letter = word[i]!
    if (letter === option.short) return option.stuck !== true || i + 1 < word.length ? `-${letter}` : undefined
    if (shortValues.includes(letter)) return undefined
  }
  return undefined
}

/** The sub-commands whose first operand can make them run a command: `git bisect run CMD`. */
const GIT_RUNNER_ACTIONS: ReadonlyMap<string, string> = new Map([["bisect", "run"], ["submodule", "foreach"]])

/**
 * Why a git command runs a program its line names (`git rebase -x CMD`), or undefined. A sub-command that is
 * not a plain word (`git $SUB`) may be any of them.
 */
const gitRunsProgram = (words: ReadonlyArray<Word>): string | undefined => {
  const { index } = gitSubcommand(words)
  const subWord = words[index]
  if (subWord === undefined) return undefined
  const sub = subWord.value ?? subWord.source
  const rest = words.slice(index + 1).map((word) => word.value ?? word.source)
  const candidates = subWord.value === undefined ? [...GIT_RUNNERS.keys(), ...GIT_RUNNER_ACTIONS.keys()] : [sub]
  const action = rest.find((word) => !word.startsWith("-"))
  for (const candidate of candidates) {
    const runner = GIT_RUNNER_ACTIONS.get(candidate)
    if (runner !== undefined && action === runner) return `git ${sub} ${runner} runs the given command`
    const runners = GIT_RUNNERS.get(candidate)
    if (runners === undefined) continue
    for (const word of rest) {
      if (!word.startsWith("-") || word === "-" || word === "--") continue
      for (const option of runners.options) {
        const named = givenAs(word, option, runners.shortValues)
        if (named !== undefined) return `git ${sub} ${named} ${option.does ?? "runs the given command"}`
      }
    }
  }
  return undefined
}

/**
 * git's sub-commands that print what files hold, in history, the index or on disk: their `REV:path` operands
 * (`git show HEAD:key`, `:key` for the index), pathspecs after `--`, `diff --no-index`'s files and blame's file.
 */
const GIT_CONTENT = new Set([
  "show", "cat-file", "diff", "difftool", "diff-tree", "diff-index", "diff-files", "log", "whatchanged", "blame",
  "annotate", "grep"
])

/**
 * Options of those sub-commands that always take the next word as their value (`git log -n 5`), so it is no
 * operand. Ones whose value is optional (`--pretty`, `--abbrev`) are left out: taking an object name for their
 * value would hide it.
 */
const GIT_CONTENT_VALUES = wordSet(
  "-n -L -S -G -O -e --author --committer --grep --since --after --until --before --max-count --skip " +
    "--diff-filter --ignore-rev --ignore-revs-file --contents"
)
/** The same for `git grep` (where `-n`, `-L` and `-O` take none) and `git archive`. */
const GIT_GREP_VALUES = wordSet(
  "-e -f -A -B -C -m --after-context --before-context --context --max-count --max-depth --threads"
)
const GIT_ARCHIVE_VALUES = wordSet("--format --prefix --remote --exec --add-file --add-virtual-file --mtime")

/** What `git grep` searches and `git archive` packs without a path: the cwd's whole tree (the revision's). */
const WHOLE_TREE: Word = { value: ".", source: "." }

/** A word cut out of a longer one (`secrets/key` of `HEAD:secrets/key`); a dynamic one names a path unknown. */
const cutWord = (word: Word, value: string | undefined): Word =>
  value === undefined ? { value: undefined, source: word.source } : { value, source: value }

/**
 * The path of a `REV:path` object name (`HEAD:secrets/key`, `:secrets/key` and `:0:secrets/key` in the index);
 * undefined for a plain revision or `:/message`. git takes `path` from the repository's root and `./path` from
 * the cwd: both are taken from the cwd here (the root is not known without looking), which is the same place
 * when the session starts at the root.
 */
/** The read of a `REV:path` object's path: from the repository's top, unless written `./` or `../` (the cwd's). */
const objectRead = (word: Word): Array<PathWord> => {
  const object = objectPath(word)
  if (object === undefined) return []
  const value = object.value
  return value === undefined || value.startsWith("./") || value.startsWith("../") || value === "." || value === ".."
    ? wholeRead(object)
    : [[object, "read", true, undefined, undefined, "."]]
}

const objectPath = (word: Word): Word | undefined => {
  if (word.value === undefined) {
    // `HEAD:$F`, `$OBJECT`: which file it names cannot be known.
    return word.source.startsWith("-") ? undefined : cutWord(word, undefined)
  }
  const match = /^([^:]*):(?:[0-3]:)?(.*)$/s.exec(word.value)
  if (match === null || match[2] === "" || (match[1] === "" && match[2]!.startsWith("/"))) return undefined
  return cutWord(word, match[2])
}

/**
 * What a pathspec (`secrets`, `'*.txt'`, `:(top)secrets`) may name, read whole: an exclusion names nothing; a
 * pattern (git matches `*` across `/`) or a case-insensitive one, its static directory.
 */
const pathspecPath = (word: Word): Word | undefined => {
  const value = word.value
  if (value === undefined || !value.startsWith(":")) {
    if (value === undefined) return word
    // git matches the pattern itself, whether bash expanded it or not: the word's syntax is not needed.
    if (!/[*?[]/.test(value)) return cutWord(word, value)
    const cut = value.slice(0, value.search(/[*?[]/)).lastIndexOf("/")
    return cutWord(word, cut === -1 ? "." : cut === 0 ? "/" : value.slice(0, cut))
  }
  const long = /^:\(([^)]*)\)(.*)$/s.exec(value)
  const short = long === null ? /^:([/!^]*):?(.*)$/s.exec(value) : null
  const magic = long?.[1]?.split(",") ?? [...(short?.[1] ?? "")]
  if (magic.some((word) => word === "exclude" || word === "!" || word === "^")) return undefined
  const rest = long?.[2] ?? short?.[2] ?? ""
  if (rest === "" || magic.some((word) => word === "icase" || word.startsWith("attr"))) return cutWord(word, ".")
  return pathspecPath(cutWord(word, rest))
}

/** `git cat-file --batch`, `git log --stdin`: the objects and paths they print come from the input. */
const gitReadsInput = (words: ReadonlyArray<Word>): boolean => {
  const { index } = gitSubcommand(words)
  const sub = words[index]?.value
  if (sub === undefined || !GIT_CONTENT.has(sub)) return false
  for (let i = index + 1; i < words.length; i++) {
    const text = words[i]!.value ?? words[i]!.source
    if (text === "--") return false
    if (/^--(batch|stdin)/.test(text)) return true
  }
  return false
}

/** A path git reads whole. */
const wholeRead = (word: Word | undefined): Array<PathWord> => (word === undefined ? [] : [[word, "read", true]])

/** Whether git takes an operand for a pathspec without looking: a glob (no revision holds one) or `:(magic)`. */
const looksLikePathspec = (value: string): boolean =>
  value.startsWith(":(") || (!value.includes(":") && !/[@^]\{/.test(value) && /[*?[]/.test(value))

/**
 * What git makes of an operand without `--` (with one, operands are revisions): a pathspec when it looks like
 * one, a `REV:path` object's path, revision syntax (`stash@{0}`, `HEAD^{tree}`) nothing; else a path when
 * something is on disk there (git's rule: what is no revision must name a file), which the rule subjects see.
 */
const gitOperand = (word: Word): Array<PathWord> => {
  const value = word.value
  if (value !== undefined && looksLikePathspec(value)) return wholeRead(pathspecPath(word))
  if (value === undefined || value.includes(":")) return objectRead(word)
  if (/[@^]\{/.test(value)) return []
  return [[word, "read", true, undefined, "exists"]]
}

/**
 * What a content sub-command's operands and pathspecs (the words after `--`) read. `git archive TREE [PATH…]`
 * packs the tree's path, else the paths, else the whole tree; grep searches the whole tree (the work tree's or
 * each revision's) unless a path limits it, which an operand naming something on disk does.
 */
const gitContentReads = (
  sub: string,
  operands: ReadonlyArray<Word>,
  pathspecs: ReadonlyArray<Word>,
  dashdash: boolean,
  noIndex: boolean
): Array<PathWord> => {
  const specs = pathspecs.flatMap((word) => wholeRead(pathspecPath(word)))
  if (sub === "archive") {
    const [tree, ...paths] = operands
    if (tree === undefined) return []
    const object = objectRead(tree)
    const named = paths.flatMap((word) => wholeRead(pathspecPath(word))).concat(specs)
    return object.length > 0 ? object : named.length > 0 ? named : wholeRead(WHOLE_TREE)
  }
  if (noIndex && sub !== "grep") return [...operands, ...pathspecs].flatMap(wholeRead)
  const named = noIndex
    ? operands.flatMap(wholeRead)
    : dashdash || sub === "cat-file" || sub === "blame" || sub === "annotate"
    ? operands.flatMap(objectRead)
    : operands.flatMap(gitOperand)
  if ((sub === "blame" || sub === "annotate") && !dashdash) named.push(...wholeRead(operands.at(-1)))
  if (sub !== "grep") return [...named, ...specs]
  const limited = specs.length > 0 ||
    (noIndex ? operands.length > 0 : !dashdash && operands.some((word) => looksLikePathspec(word.value ?? "")))
  const revision = (word: Word) => {
    if (dashdash) return objectPath(word) === undefined
    const found = gitOperand(word)[0]
    return found === undefined || found[4] === "exists"
  }
  const whole = operands.length === 0 || (!noIndex && operands.some(revision))
  if (limited || !whole) return [...named, ...specs]
  return [...named, ...specs, [WHOLE_TREE, "read", true, undefined, "noOperandExists"]]
}

/**
 * The files git writes for output options: `--output` of diff, log, show, format-patch or archive (a prefix
 * too: git takes unambiguous ones), `-o` of archive and format-patch, format-patch's `--output-directory`; and
 * the files the content sub-commands (`GIT_CONTENT`) and archive read, whole. All relative to `-C`'s directory
 * when one is given.
 */
const gitPaths = (words: ReadonlyArray<Word>): Array<PathWord> => {
  const { directory, index } = gitSubcommand(words)
  const sub = words[index]?.value
  const reads = sub !== undefined && (GIT_CONTENT.has(sub) || sub === "archive")
  const values = sub === "grep" ? GIT_GREP_VALUES : sub === "archive" ? GIT_ARCHIVE_VALUES : GIT_CONTENT_VALUES
  const out: Array<PathWord> = []
  const read = (word: Word) => {
    out.push([under(directory, word), "read", true])
  }
  const operands: Array<Word> = []
  let noIndex = false
  let patternGiven = false
  let i = index + 1
  for (; i < words.length; i++) {
    const word = words[i]!
    const text = word.value ?? word.source
    if (text === "--") break
    if (!text.startsWith("-") || text === "-") {
      operands.push(word)
      continue
    }
    const eq = text.indexOf("=")
    // grep's short options cluster (`-ie TOP`, `-vfFILE`): the first that takes a value takes the rest of the word,
    // or the next word.
    const cluster = sub === "grep" && eq === -1 ? /^-[^-efABCmO]*([efABCmO])/.exec(text) : null
    const option = cluster !== null
      ? `-${cluster[1]}`
      : eq === -1
      ? (reads && sub !== "grep" && /^-L./.test(text) ? "-L" : text)
      : text.slice(0, eq)
    const stuckAt = cluster !== null ? cluster[0].length : option !== text && eq === -1 ? 2 : text.length
    if (option === "--no-index") noIndex = true
    if (sub === "grep" && (option === "-e" || option === "-f")) patternGiven = true
    const output = /^--o(u(t(p(u(t)?)?)?)?)?$/.test(option) || /^--output-d/.test(option) ||
      (option === "-o" && (sub === "archive" || sub === "format-patch"))
    const content = reads && values.has(option)
    if (!output && !content) continue
    const value = eq !== -1
      ? { value: word.value?.slice(eq + 1), source: text.slice(eq + 1) }
      : stuckAt < text.length
      ? { value: word.value?.slice(stuckAt), source: text.slice(stuckAt) }
      : words[++i]
    if (value === undefined) continue
    if (output) out.push([under(directory, value), "write"])
    // `blame --contents f` prints f annotated, `grep -f f` searches for f's lines, `archive --add-file f` packs f
    // and `--remote r` the repository r; `log -L 1,9:f` prints the history of f's lines.
    else if (option === "--contents" || option === "--add-file" || option === "--remote") read(value)
    else if (option === "-f" && sub === "grep") read(value)
    else if (option === "-L" && sub !== "blame" && sub !== "annotate" && sub !== "grep") {
      read(cutWord(value, value.value === undefined ? undefined : value.value.slice(value.value.lastIndexOf(":") + 1)))
    }
  }
  if (!reads || sub === undefined) return out
  // `git grep -- x [REV…] [-- PATH…]`: with no pattern yet, git skips this `--` (it cannot separate revisions from
  // paths before a pattern) and takes the next word for the pattern, so what follows are operands again.
  if (sub === "grep" && !patternGiven && operands.length === 0 && i < words.length) {
    const next = words.findIndex((word, at) => at > i + 1 && (word.value ?? word.source) === "--")
    const end = next === -1 ? words.length : next
    operands.push(...words.slice(i + 1, end))
    i = end
  }
  // `git grep x` searches for x: its first operand is the pattern unless -e or -f gave one.
  const given = sub === "grep" && !patternGiven ? operands.slice(1) : operands
  const found = gitContentReads(sub, given, words.slice(i + 1), i < words.length, noIndex)
  for (const [word, access, recursive, into, onlyIf, fromTop] of found) {
    // A repository-top path stays as written; where git runs (`-C`'s directory) finds the top.
    const runsIn = directory === undefined ? "." : directory.value
    out.push(
      fromTop !== undefined && runsIn !== undefined
        ? [word, access, recursive, into, onlyIf, runsIn]
        : [under(directory, word), access, recursive, into, onlyIf]
    )
  }
  return out
}

/** unzip's listing, testing and printing modes: nothing is extracted to disk. */
const UNZIP_NO_EXTRACT = "ltvzZpc"

/**
 * unzip reads its archive and, extracting, writes the `-d` directory (or `.`) whole: the archive may hold
 * anything, `.git/hooks/…` too. Operands after the archive are member names, not paths.
 */
const unzipPaths = (words: ReadonlyArray<Word>): Array<PathWord> => {
  let archive: Word | undefined
  let directory: Word | undefined
  let extracts = true
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!
    const text = word.value ?? word.source
    if (!text.startsWith("-") || text === "-") {
      archive ??= word
      continue
    }
    for (let j = 1; j < text.length; j++) {
      if (UNZIP_NO_EXTRACT.includes(text[j]!)) extracts = false
      if (text[j] !== "d" && text[j] !== "P") continue
      const rest = text.slice(j + 1)
      const value = rest === "" ? words[++i] : { value: word.value === undefined ? undefined : rest, source: rest }
      if (text[j] === "d") directory = value
      break
    }
  }
  const out: Array<PathWord> = archive === undefined ? [] : [[archive, "read"]]
  if (extracts) out.push([directory ?? { value: ".", source: "." }, "write", true])
  return out
}

/**
 * find's start paths: the operands before the first expression, after `-H`, `-L`, `-P`, `-D x`, `-Olevel`
 * (none means `.`, as find assumes); with `-delete` anything under them may go, so they are written whole.
 */
const findPaths = (words: ReadonlyArray<Word>): Array<PathWord> => {
  const deletes = words.some((word) => word.value === "-delete")
  const out: Array<PathWord> = []
  let i = 1
  for (; i < words.length; i++) {
    const text = words[i]!.value ?? words[i]!.source
    if (text === "-D") i++
    else if (!(text === "-H" || text === "-L" || text === "-P" || /^-O\d*$/.test(text))) break
  }
  for (; i < words.length; i++) {
    const text = words[i]!.value ?? words[i]!.source
    if ((text.startsWith("-") && text !== "-") || text === "(" || text === "!" || text === ")" || text === ",") break
    out.push([words[i]!, deletes ? "write" : "read", deletes])
  }
  // `find -delete` deletes under the working directory: without this it had no path to protect.
  if (out.length === 0) out.push([{ value: ".", source: "." }, deletes ? "write" : "read", deletes])
  // The actions that write their list to a file name it in the next word.
  for (; i < words.length - 1; i++) {
    if (FIND_WRITES.has(words[i]!.value ?? words[i]!.source)) out.push([words[++i]!, "write"])
  }
  return out
}

const FIND_WRITES = new Set(["-fprint", "-fprint0", "-fprintf", "-fls"])

/** dd's `if=` is read, `of=` written. */
const ddPaths = (words: ReadonlyArray<Word>): Array<PathWord> => {
  const out: Array<PathWord> = []
  for (const word of words.slice(1)) {
    const text = word.value ?? word.source
    if (text.startsWith("if=")) out.push([{ value: word.value?.slice(3), source: text.slice(3) }, "read"])
    if (text.startsWith("of=")) out.push([{ value: word.value?.slice(3), source: text.slice(3) }, "write"])
  }
  return out
}

/** tar's short options that take a value: the next word, or the rest of a `-` cluster. */
const TAR_VALUES = new Set("bCfFgHIKLNTVX".split(""))

/**
 * The directories tar's `-C`/`--directory` name: with `-x`/`--extract` (also old style, `tar xf a.tar -C d`)
 * written whole, since the archive may hold anything; read otherwise. Extracting without one writes the
 * working directory whole (`tar -xf a.tar` may hold `.git/hooks/…`).
 */
const tarPaths = (words: ReadonlyArray<Word>): Array<PathWord> => {
  let extract = false
  // Creating, appending, updating, concatenating or deleting writes the archive `-f` names.
  let writesArchive = false
  // Creating, appending or updating reads its operands' whole trees into the archive.
  let archivesSources = false
  const directories: Array<Word> = []
  const archives: Array<Word> = []
  /** Each operand, and the `-C` directory before it, which it is relative to. */
  const sources: Array<readonly [Word, Word | undefined]> = []
  const lists: Array<Word> = []
  const option = (letter: string, value: () => Word | undefined) => {
    if (letter === "x") extract = true
    if (letter === "c" || letter === "r" || letter === "u" || letter === "A") writesArchive = true
    if (letter === "c" || letter === "r" || letter === "u") archivesSources = true
    if (!TAR_VALUES.has(letter)) return false
    const word = value()
    if (letter === "C" && word !== undefined) directories.push(word)
    if (letter === "f" && word !== undefined) archives.push(word)
    if (letter === "T" && word !== undefined) lists.push(word)
    return true
  }
  let i = 1
  const first = words[1]?.value
  // Old style: the first word's letters are options, and those taking values take the next words in order.
  if (first !== undefined && !first.startsWith("-")) {
    i = 2
    for (const letter of first) option(letter, () => words[i++])
  }
  for (; i < words.length; i++) {
    const word = words[i]!
    const text = word.value ?? word.source
    if (text === "--") {
      for (const source of words.slice(i + 1)) sources.push([source, directories.at(-1)])
      break
    }
    if (!text.startsWith("-") || text === "-") {
      sources.push([word, directories.at(-1)])
      continue
    }
    if (text.startsWith("--")) {
      const eq = text.indexOf("=")
      const name = eq === -1 ? text : text.slice(0, eq)
      // GNU tar takes unambiguous prefixes: `--ext` is `--extract`, `--dir` `--directory`.
      if ((name.length >= 5 && "--extract".startsWith(name)) || name === "--get") extract = true
      if (["--create", "--append", "--update", "--catenate", "--concatenate", "--delete"].some((long) =>
        name.length >= 5 && long.startsWith(name)
      )) writesArchive = true
      if (["--create", "--append", "--update"].some((long) => name.length >= 5 && long.startsWith(name))) {
        archivesSources = true
      }
      if (name.length >= 7 && "--files-from".startsWith(name)) {
        const list = eq === -1 ? words[++i] : { value: word.value?.slice(eq + 1), source: text.slice(eq + 1) }
        if (list !== undefined) lists.push(list)
        continue
      }
      const takesDirectory = name.length >= 5 && "--directory".startsWith(name)
      const takesFile = name.length >= 4 && "--file".startsWith(name)
      if (takesDirectory || takesFile) {
        const value = eq === -1 ? words[++i] : { value: word.value?.slice(eq + 1), source: text.slice(eq + 1) }
        if (value !== undefined) (takesDirectory ? directories : archives).push(value)
      }
      continue
    }
    for (let j = 1; j < text.length; j++) {
      const rest = text.slice(j + 1)
      const takes = option(text[j]!, () =>
        rest === "" ? words[++i] : { value: word.value === undefined ? undefined : rest, source: rest })
      if (takes) break
    }
  }
  const archiveWords = archives.map((archive): PathWord => [archive, writesArchive ? "write" : "read"])
  if (extract && directories.length === 0) return [[{ value: ".", source: "." }, "write", true], ...archiveWords]
  // What goes into an archive: each source's whole tree, relative to the `-C` directory before it if any. Names
  // from a `-T` list are unknown: a word with no value makes the line opaque.
  const archived: Array<PathWord> = []
  if (archivesSources) {
    for (const [source, directory] of sources) {
      archived.push([under(directory, source), "read", true])
    }
    for (const list of lists) archived.push([list, "read"], [{ value: undefined, source: `-T ${list.source}` }, "read"])
  }
  return [
    ...directories.map((directory): PathWord =>
      extract ? [directory, "write", true] : [directory, "read"]
    ),
    ...archiveWords,
    ...archived
  ]
}

/** tar's options that run another program (`--to-command`, `-I`/`--use-compress-program`, `-F`, …). */
const tarRunsPrograms = (words: ReadonlyArray<Word>): boolean =>
  words.slice(1).some((word, index) => {
    const text = word.value ?? word.source
    if (/^--(to-c|use|checkpoint-a|info|new-v|rsh|rmt)/.test(text)) return true
    // -I and -F in a cluster, or in the old-style first word.
    return (/^-[^-]/.test(text) || (index === 0 && !text.startsWith("-"))) && /^-?[A-Za-z]*[IF]/.test(text)
  })

/** A word bash expands: the static text before the first expansion, and the rest as a glob when it is only one. */
interface Shape {
  readonly prefix: string
  /** The glob from its first special character (quoted parts escaped); undefined for a static word. */
  readonly glob: string | undefined
  /** True when a parameter, command, arithmetic or brace expansion is involved, not just a glob. */
  readonly expands: boolean
}

const escapeGlob = (text: string) => text.replace(/[*?[\]\\{}()!@+]/g, "\\$&")

const shapeOf = (word: Word): Shape => {
  const node = word.node
  if (node === undefined) {
    // A word cut out of an option (`--file=x`): without its syntax, every special character counts.
    if (word.value === undefined) return { prefix: "", glob: "", expands: true }
    const at = word.value.search(/[*?[{]/)
    if (at === -1) return { prefix: word.value, glob: undefined, expands: false }
    return { prefix: word.value.slice(0, at), glob: word.value.slice(at), expands: word.value[at] === "{" }
  }
  let prefix = ""
  let glob: string | undefined
  const parts = node.type === "concatenation" ? node.namedChildren : [node]
  for (const part of parts) {
    if (part === null) continue
    const partType = part.type
    if (partType === "word" || partType === "number") {
      const text = part.text
      for (let i = 0; i < text.length; i++) {
        const c = text[i]!
        if (c === "{") return { prefix, glob: glob ?? "", expands: true }
        if (glob !== undefined) glob += c === "\\" ? `\\${text[++i] ?? ""}` : c
        else if (c === "*" || c === "?" || c === "[") glob = c
        else if (c === "\\") prefix += text[++i] ?? ""
        else prefix += c
      }
      continue
    }
    const value = partType === "raw_string" || partType === "string" ? staticValue(part) : undefined
    if (value === undefined) return { prefix, glob: glob ?? "", expands: true }
    if (glob !== undefined) glob += escapeGlob(value)
    else prefix += value
  }
  return { prefix, glob, expands: false }
}

/** A path argument, or why the word cannot be one the rules can check. */
const pathArgumentOf = (
  word: Word,
  access: Access,
  recursive: boolean,
  into?: ReadonlyArray<string>,
  onlyIf?: PathArgument["onlyIf"],
  fromRepositoryTop?: string
): PathArgument | string => {
  const argument = pathOf(word, access)
  if (typeof argument === "string") return argument
  const whole = recursive ? { ...argument, recursive } : argument
  const moved = into === undefined ? whole : { ...whole, into }
  const limited = onlyIf === undefined ? moved : { ...moved, onlyIf }
  return fromRepositoryTop === undefined ? limited : { ...limited, fromRepositoryTop }
}

const pathOf = (word: Word, access: Access): PathArgument | string => {
  const shape = shapeOf(word)
  const otherHome = `the path ${word.source} names another user's home`
  if (shape.glob === undefined) return /^~[^/]/.test(shape.prefix) ? otherHome : { path: shape.prefix, access }
  const cut = shape.prefix.lastIndexOf("/")
  const dir = cut === -1 ? undefined : cut === 0 ? "/" : shape.prefix.slice(0, cut)
  if (dir !== undefined && /^~[^/]/.test(dir)) return otherHome
  if (shape.expands) {
    if (dir === undefined) return `the path ${word.source} is built from a value the analysis cannot know`
    // `./{secrets,x}/key` or `src/$X` may name anything under the static directory: all of it is taken.
    return { path: dir, access, recursive: true }
  }
  const pattern = shape.prefix.slice(cut + 1) + shape.glob
  const segments = pattern.split("/")
  if (segments.slice(1).includes("..")) return `the path ${word.source} climbs out of a directory a pattern matches`
  // A pattern over several levels (`secret*/key.txt`) is expanded level by level by the rule subjects, as bash
  // does; only its static directory would hide what it reaches (`cat */key.txt` read ./secrets/key.txt).
  return { path: dir ?? ".", access, pattern }
}

/** Where the shell may be after `cd target` from any of `cwds`; undefined when the analysis cannot know. */
const cwdsAfter = (cwds: ReadonlyArray<string>, target: string): ReadonlyArray<string> | undefined => {
  const next = isRelativeTarget(target) ? cwds.map((cwd) => (cwd === "." ? target : `${cwd}/${target}`)) : [target]
  const all = [...new Set([...cwds, ...next])]
  return all.length > 16 ? undefined : all
}

/** The line starts where the session's shell is. */
export const START: ReadonlyArray<string> = ["."]

// ---------------------------------------------------------------------------------------------------------------
// The walk

const WRITE_OPERATORS = new Set([">", ">>", ">|", "&>", "&>>", "<>", ">&"])
const HARMLESS_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"])

interface Collector {
  readonly commands: Array<SimpleCommand>
  readonly redirects: Array<Redirect>
  opaque: string | undefined
  changesDirectory: boolean
  /** Where the shell may be at this point of the line (see `SimpleCommand.cwds`). */
  cwds: ReadonlyArray<string>
  /** Set once a `cd` goes where the analysis cannot follow: relative paths after it cannot be resolved. */
  lostCwd: string | undefined
  /** Inside a loop body, a `cd` also moves the commands before it (on the next iteration). */
  loops: number
  /** A `cd` inside a loop: every relative path of the line may mean another place. */
  cdInLoop: boolean
  /** Whether the line sets a shell variable (its value could make `src/$X` leave `src`). */
  setsVariables: boolean
  /** The first path argument whose directory was taken from before an expansion, for the check above. */
  expandedPath: string | undefined
  /** The tree id of the command whose exit status is the line's (see `statusNode`), and that command. */
  readonly statusNodeId: number | undefined
  statusCommand: SimpleCommand | undefined
  /** Inside a pipeline after its first command: stdin is a pipe (searched by `rg` without a path). */
  piped: number
  /** Words the grammar hangs on a redirection (`cat < f secret`), by the id of the command they belong to. */
  readonly trailing: Map<number, ReadonlyArray<SyntaxNode>>
}

const markOpaque = (collector: Collector, reason: string) => {
  collector.opaque ??= reason
}

const isQuoted = (type: string): boolean => type === "raw_string" || type === "string"

const redirectOf = (node: SyntaxNode, collector: Collector): Redirect | undefined => {
  if (node.type !== "file_redirect") return undefined
  const operator = node.children.find((child) => child !== null && !child.isNamed)?.type ?? ">"
  const destination = node.childForFieldName("destination")
  if (destination === null) return undefined
  const target = staticValue(destination)
  if ((operator === ">&" || operator === "<&") && (target === "-" || /^\d+$/.test(target ?? ""))) return undefined
  if (target === undefined) {
    markOpaque(collector, `the redirection target ${destination.text} is not a plain path`)
  } else if (/^~[^/]/.test(target)) {
    markOpaque(collector, `the redirection target ${destination.text} names another user's home`)
  } else if (!isQuoted(destination.type) && /[*?[]/.test(destination.text)) {
    // Bash expands a glob in a redirection target when it matches one file: `> /etc/pass*` writes /etc/passwd.
    markOpaque(collector, `the redirection target ${destination.text} is a pattern bash expands`)
  }
  if (target !== undefined && HARMLESS_TARGETS.has(target)) return undefined
  return { operator, target, access: WRITE_OPERATORS.has(operator) ? "write" : "read" }
}

/** The words the grammar hangs on a redirection that are arguments: destinations after the first, a heredoc's. */
const trailingWords = (redirect: SyntaxNode): ReadonlyArray<SyntaxNode> => {
  const type = redirect.type
  const words = type === "file_redirect"
    ? redirect.childrenForFieldName("destination").slice(1)
    : type === "heredoc_redirect"
    ? redirect.childrenForFieldName("argument")
    : []
  return words.filter((word): word is SyntaxNode => word !== null)
}

const simpleCommand = (
  children: ReadonlyArray<SyntaxNode | null>,
  redirects: ReadonlyArray<Redirect>,
  collector: Collector
) => {
  const env: Array<string> = []
  const words: Array<Word> = []
  for (const child of children) {
    if (child === null) continue
    // Each read of a node's type crosses into the wasm parser: once per child.
    const type = child.type
    if (type === "variable_assignment") {
      collector.setsVariables = true
      env.push(child.text)
      const name = child.childForFieldName("name")?.text ?? ""
      if (DANGEROUS_ENV.test(name)) markOpaque(collector, `the prefix ${name}=… changes what the command runs`)
    } else if (type === "command_name") {
      const inner = child.namedChildren[0] ?? child
      const word = wordOf(inner)
      if (word.value === undefined) markOpaque(collector, `the command name ${child.text} is not a plain word`)
      else if (word.value !== child.text) markOpaque(collector, `the command name ${child.text} is quoted or escaped`)
      else if (/[{}*?[\]]/.test(word.value)) markOpaque(collector, `the command name ${child.text} is expanded by bash`)
      words.push(word)
    } else if (type === "file_redirect") {
      const redirect = redirectOf(child, collector)
      if (redirect !== undefined) redirects = [...redirects, redirect]
      for (const word of trailingWords(child)) words.push(wordOf(word))
    } else if (type === "herestring_redirect" || type === "heredoc_redirect") {
      for (const word of trailingWords(child)) words.push(wordOf(word))
      continue
    } else {
      words.push(wordOf(child))
    }
  }
  addCommand(words, env, redirects, collector)
}

const addCommand = (
  words: ReadonlyArray<Word>,
  env: ReadonlyArray<string>,
  redirects: ReadonlyArray<Redirect>,
  collector: Collector
) => {
  const stripped = stripWrappers(words)
  if (stripped.opaque !== undefined) markOpaque(collector, stripped.opaque)
  const values = stripped.words.map((w) => w.value ?? w.source)
  const name = values[0] ?? ""
  if (name === "eval") markOpaque(collector, "eval runs a string as a command")
  if (name === "exec") markOpaque(collector, "exec replaces the shell with another command")
  if (name === "cd" || name === "pushd" || name === "popd") collector.changesDirectory = true
  if (SHELLS.has(path.basename(name))) {
    const args = values.slice(1)
    if (args.some((w) => /^-[a-z]*c/.test(w))) markOpaque(collector, `${name} -c runs a string as a command`)
    else if (!args.some((w) => !w.startsWith("-"))) markOpaque(collector, `${name} runs commands from its input`)
  }
  if (name === "source" || name === ".") markOpaque(collector, `${name} runs the commands of a file`)
  if (name === "find" && hasOption(values, /^-(exec|execdir|ok|okdir)$/)) {
    markOpaque(collector, "find -exec runs other commands")
  }
  // Before `git -c`'s check, so that `git clone -c` is named as clone's option.
  if (name === "git") {
    const runs = gitRunsProgram(stripped.words)
    if (runs !== undefined) markOpaque(collector, runs)
  }
  if (name === "git" && hasOption(values, /^(-c|--config-env)/)) {
    markOpaque(collector, "git -c can make git run other commands")
  }
  if (name === "git" && hasOption(values, /^--exec-path=/)) {
    markOpaque(collector, "git --exec-path makes git run programs from another directory")
  }
  if (name === "hash" && hasOption(values, /^-[a-z]*p/)) {
    markOpaque(collector, "hash -p changes which program a command name runs")
  }
  if (stripped.wrappers.includes("command") || stripped.wrappers.includes("builtin")) {
    const wrapper = stripped.wrappers.includes("command") ? "command" : "builtin"
    markOpaque(collector, `${wrapper} bypasses aliases and functions`)
  }
  if (name === "alias") markOpaque(collector, "alias changes what later commands mean")
  if (name === "awk" || name === "gawk" || name === "mawk" || name === "nawk") {
    const risk = awkRisk(stripped.words)
    if (risk !== undefined) markOpaque(collector, risk)
  }
  // Patterns are matched as bash does by default: these options make them match more (dotfiles, other cases).
  if (name === "shopt" && values.some((w) => /^(dotglob|nocaseglob|extglob|globskipdots)$/.test(w))) {
    markOpaque(collector, "shopt changes which files the line's patterns match")
  }
  if (STRING_RUNNERS.has(name) && !(name === "trap" && values.length <= 2 && values[1]?.startsWith("-"))) {
    markOpaque(collector, `${name} runs a string as a command later`)
  }
  if ((name === "su" || name === "script") && hasOption(values, /^(-c|--command)/)) {
    markOpaque(collector, `${name} -c runs a string as a command`)
  }
  if (VARIABLE_SETTERS.has(name) || (name === "printf" && values.includes("-v"))) collector.setsVariables = true
  const cwds = collector.cwds
  const paths = pathArguments(name, stripped, collector)
  const hasWrite = redirects.some((r) => r.access === "write")
  collector.commands.push({
    text: stripped.words.map(render).join(" "),
    words: values,
    env,
    wrappers: stripped.wrappers,
    redirects,
    kind: kindOf(name),
    // A path it writes (`sort -uo out`, an option cluster readOnlyWords does not take apart) is a write too.
    readOnly: !hasWrite && readOnlyWords(values) && !paths.some((p) => p.access === "write"),
    paths,
    cwds
  })
  // A privilege or scheduling wrapper stays in the rule subject (allowing `rm` must not allow `sudo rm`),
  // and the command it runs is a subject too, so a deny rule on that command still applies.
  const inner = innerCommandStart(stripped.words.map((w) => w.value))
  if (inner !== undefined) addCommand(stripped.words.slice(inner), [], redirects, collector)
  // `/bin/rm` is `rm` to a deny rule; allowing `rm` still does not allow whatever `./rm` is.
  const base = path.posix.basename(name)
  if (name.includes("/") && base !== "" && base !== name) {
    addCommand([{ value: base, source: base }, ...stripped.words.slice(1)], [], redirects, collector)
  }
}

/** Builtins that set variables from their arguments or input. */
const VARIABLE_SETTERS = new Set(["read", "mapfile", "readarray", "getopts", "let", "local", "typeset"])

/** sed's commands that need no argument, or only an optional number (`q5`, `l 70`). */
const SED_PLAIN = new Set("=dDgGhHlLnNpPqQxzF".split(""))

/**
 * Whether a sed script may touch what its path arguments do not show: the `w`, `W`, `r`, `R` and `e` commands
 * or the `s` command's `w` and `e` flags (a file written or read, a command run). A scan, not a parser: what it
 * cannot follow counts as touching, so an odd script asks rather than passes.
 */
export const sedScriptEscapes = (script: string): boolean => {
  let i = 0
  const n = script.length
  const toLineEnd = () => {
    while (i < n && script[i] !== "\n") i += script[i] === "\\" ? 2 : 1
  }
  /** Skips a delimited part (`/re/`, the parts of `s` and `y`); false when it does not end. */
  const delimited = (delimiter: string): boolean => {
    while (i < n && script[i] !== delimiter) {
      if (script[i] === "\\") i++
      i++
    }
    if (i >= n) return false
    i++
    return true
  }
  const address = (): boolean => {
    const c = script[i]
    if (c === "/" || c === "\\") {
      if (c === "\\") i++
      const delimiter = script[i]
      if (delimiter === undefined || delimiter === "\n") return false
      i++
      if (!delimited(delimiter)) return false
      while (script[i] === "I" || script[i] === "M") i++
      return true
    }
    if (c === "$") {
      i++
      return true
    }
    if (c !== undefined && /[0-9+~]/.test(c)) {
      i++
      while (i < n && /[0-9~]/.test(script[i]!)) i++
      return true
    }
    return true
  }
  while (i < n) {
    const c = script[i]!
    if (/[\s;{}!]/.test(c)) {
      i++
      continue
    }
    if (c === "#") {
      toLineEnd()
      continue
    }
    const start = i
    if (!address()) return true
    while (script[i] === " " || script[i] === "\t") i++
    if (script[i] === ",") {
      i++
      while (script[i] === " " || script[i] === "\t") i++
      if (!address()) return true
    }
    while (script[i] === " " || script[i] === "\t" || script[i] === "!") i++
    const command = script[i]
    if (command === undefined) return i !== start
    i++
    if (/[{};\n]/.test(command)) continue
    if (SED_PLAIN.has(command)) {
      while (i < n && /[ \t0-9]/.test(script[i]!)) i++
      continue
    }
    switch (command) {
      case "s": {
        const delimiter = script[i++]
        if (delimiter === undefined || delimiter === "\n" || delimiter === "\\") return true
        if (!delimited(delimiter) || !delimited(delimiter)) return true
        while (i < n && /[gpiImM0-9]/.test(script[i]!)) i++
        if (script[i] === "w" || script[i] === "e") return true
        continue
      }
      case "y": {
        const delimiter = script[i++]
        if (delimiter === undefined || delimiter === "\n" || delimiter === "\\") return true
        if (!delimited(delimiter) || !delimited(delimiter)) return true
        continue
      }
      case "a":
      case "i":
      case "c":
        // Text up to the end of the line (a backslash continues it).
        toLineEnd()
        continue
      case ":":
      case "b":
      case "t":
      case "T":
      case "v":
        while (i < n && script[i] !== ";" && script[i] !== "\n") i++
        continue
      default:
        // w, W, r, R, e, and anything this scan does not know.
        return true
    }
  }
  return false
}

/** What an option of a script-taking command (sed, awk) is: a script, a script file, another's value, a flag. */
type ScriptOption = "script" | "file" | "value" | "flag"

/**
 * The scripts a sed or awk command's options give (`-e`), whether one names a script file (`-f`), and the first
 * operand (the script when no option gives one). `long` tells what a long option is (as written, before any
 * `=`), `short` what a letter of a short cluster is; "stop" ends a cluster without a value (`sed -i`).
 */
const scriptWords = (
  words: ReadonlyArray<Word>,
  long: (option: string) => ScriptOption,
  short: (letter: string) => ScriptOption | "stop"
): { readonly scripts: ReadonlyArray<Word>; readonly file: boolean; readonly operand: Word | undefined } => {
  const scripts: Array<Word> = []
  let file = false
  let operand: Word | undefined
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!
    const text = word.value ?? word.source
    if (text === "--") {
      operand ??= words[i + 1]
      break
    }
    if (!text.startsWith("-") || text === "-") {
      operand ??= word
      continue
    }
    if (text.startsWith("--")) {
      const eq = text.indexOf("=")
      const kind = long(eq === -1 ? text : text.slice(0, eq))
      const value = eq === -1 ? undefined : { value: word.value?.slice(eq + 1), source: text.slice(eq + 1) }
      if (kind === "script") scripts.push(value ?? words[++i] ?? word)
      else if (kind === "file") file = true
      else if (kind === "value" && value === undefined) i++
      continue
    }
    for (let j = 1; j < text.length; j++) {
      const kind = short(text[j]!)
      if (kind === "stop") break
      if (kind === "flag") continue
      const rest = text.slice(j + 1)
      const value = rest === "" ? words[++i] : { value: word.value === undefined ? undefined : rest, source: rest }
      if (kind === "script" && value !== undefined) scripts.push(value)
      if (kind === "file") file = true
      break
    }
  }
  return { scripts, file, operand }
}

const SED_LONG: Readonly<Record<string, ScriptOption>> = {
  "--expression": "script",
  "--file": "file",
  "--line-length": "value"
}
const SED_SHORT: Readonly<Record<string, ScriptOption | "stop">> = { i: "stop", e: "script", f: "file", l: "value" }

/** Why a sed command may do more than its path arguments show, if it may: see `sedScriptEscapes`. */
const sedRisk = (words: ReadonlyArray<Word>): string | undefined => {
  const syntax = PATH_SYNTAX.get("sed")!
  const { file, operand, scripts: given } = scriptWords(
    words,
    (option) => SED_LONG[longOption("sed", syntax, option)] ?? "flag",
    (letter) => SED_SHORT[letter] ?? "flag"
  )
  if (file) return "sed -f runs a script file the analysis cannot see into"
  const scripts = given.length === 0 && operand !== undefined ? [operand] : given
  if (scripts.some((script) => script.value === undefined)) {
    return "sed's script is built from a value the analysis cannot know"
  }
  return scripts.some((script) => sedScriptEscapes(script.value!))
    ? "sed's script may write or read files or run commands (w, W, r, R, e, or the s command's w and e flags), " +
      "which the analysis does not follow"
    : undefined
}

/**
 * Whether an awk program may touch what its path arguments do not show: `system()`, a pipe to or from a command
 * (`print | "sh"`, `"cmd" | getline`), output redirected to a file (`print > "f"`, `printf >> f`), `getline <
 * file`, or gawk's `@include`/`@load`. A scan, not a parser: strings and regular expressions are skipped, a `>`
 * counts as a redirection when it follows `print` or `printf` in the same statement outside parentheses, and
 * whatever it cannot follow counts as touching.
 */
export const awkProgramEscapes = (program: string): boolean => {
  const n = program.length
  let i = 0
  let depth = 0
  /** The parenthesis depth of the `print`/`printf`/`getline` of the current statement, if any. */
  let printAt: number | undefined
  let getlineAt: number | undefined
  let last = ""
  while (i < n) {
    const c = program[i]!
    if (c === "\"") {
      for (i++; i < n && program[i] !== "\""; i++) if (program[i] === "\\") i++
      if (i >= n) return true
      i++
      last = "\""
      continue
    }
    if (c === "#") {
      while (i < n && program[i] !== "\n") i++
      continue
    }
    // A `/` where an operand is expected starts a regular expression; elsewhere it divides.
    if (c === "/" && (last === "" || "(,{};!~&|=?:<>+-*%^\n".includes(last))) {
      for (i++; i < n && program[i] !== "/"; i++) {
        if (program[i] === "\\") i++
        else if (program[i] === "[") {
          for (i++; i < n && program[i] !== "]"; i++) if (program[i] === "\\") i++
        }
      }
      if (i >= n) return true
      i++
      last = "/"
      continue
    }
    if (/[A-Za-z_]/.test(c)) {
      const start = i
      while (i < n && /\w/.test(program[i]!)) i++
      const word = program.slice(start, i)
      if (word === "system") return true
      if (word === "print" || word === "printf") printAt = depth
      if (word === "getline") getlineAt = depth
      last = "a"
      continue
    }
    if (c === "@") return true
    if (c === "|") {
      if (program[i + 1] !== "|") return true
      i += 2
      last = "|"
      continue
    }
    if (c === ">" && printAt === depth) return true
    if (c === "<" && getlineAt === depth) return true
    if (c === "(") depth++
    if (c === ")") depth--
    if (c === ";" || c === "{" || c === "}" || c === "\n") {
      printAt = undefined
      getlineAt = undefined
    }
    if (!/\s/.test(c) || c === "\n") last = c
    i++
  }
  return false
}

/**
 * Why an awk command may do more than its path arguments show, if it may: a program file (`-f`, `-E`), gawk's
 * libraries and in-place editing (`-i inplace`, `-l`), a program built from a value, or one `awkProgramEscapes`
 * flags. gawk takes long options by any unambiguous prefix (`--fil`, `--so`).
 */
const awkRisk = (words: ReadonlyArray<Word>): string | undefined => {
  const { file, operand, scripts } = scriptWords(
    words,
    (option) =>
      /^--(fil|e|i|lo)/.test(option) ? "file" : /^--so/.test(option) ? "script" : /^--(fie|a)/.test(option)
        ? "value"
        : "flag",
    (letter) =>
      "fEil".includes(letter) ? "file" : letter === "e" ? "script" : "Fv".includes(letter) ? "value" : "flag"
  )
  if (file) return "awk runs a program file or library the analysis cannot see into"
  // After its program awk takes no options (`-e` there is a file name): the first operand is checked too.
  const programs = operand === undefined ? scripts : [...scripts, operand]
  if (programs.some((program) => program.value === undefined)) {
    return "awk's program is built from a value the analysis cannot know"
  }
  return programs.some((program) => awkProgramEscapes(program.value!))
    ? "awk's program may write files or run commands (a redirection, a pipe, system(), getline <), which the " +
      "analysis does not follow"
    : undefined
}

/** The paths a command's arguments name; records where a `cd` takes the shell, and marks what cannot be checked. */
/** Commands whose write arguments are files they put content into (not ones they remove, move or change). */
const CONTENT_WRITERS = new Set(["tee", "dd", "sort", "cp"])

/**
 * `/dev/null` and the terminal's streams as arguments, as in redirections: reading them (`diff /dev/null
 * new.txt`, `cp /dev/null log`) or writing content into them (`tee /dev/null`) touches no file. Removing,
 * moving or changing them (`rm /dev/null`, `chmod 777 /dev/null`) is not harmless and stays a subject.
 */
const isHarmlessArgument = (name: string, argument: PathArgument): boolean =>
  HARMLESS_TARGETS.has(argument.path) && argument.pattern === undefined && argument.recursive !== true &&
  (argument.access === "read" || CONTENT_WRITERS.has(name))

const pathArguments = (name: string, stripped: Stripped, collector: Collector): ReadonlyArray<PathArgument> => {
  const isCd = name === "cd" || name === "pushd"
  if (!isCd && !PATH_SYNTAX.has(name) && !OWN_SYNTAX.has(name)) return []
  const given = (pattern: RegExp) => stripped.words.some((word) => pattern.test(word.value ?? word.source))
  if (name === "unzip" && given(/^-[^-]*:/)) {
    markOpaque(collector, "unzip -: extracts paths that climb out of the directory")
  }
  if (name === "curl" && given(/^(-[a-zA-Z0-9]*K|--con(f|$))/)) {
    markOpaque(collector, "curl -K reads options (output files among them) from a file the analysis cannot see")
  }
  if (name === "wget" && given(/^(-[a-zA-Z]*e|--exe|--conf)/)) {
    markOpaque(collector, "wget -e and --config run settings (output files among them) the analysis cannot see")
  }
  if (name === "sort" && given(/^--co/)) markOpaque(collector, "sort --compress-program runs another program")
  if (name === "rg" && given(/^--pre($|=)/)) {
    markOpaque(collector, "rg --pre runs another program on every file it searches")
  }
  if (name === "tar" && tarRunsPrograms(stripped.words)) markOpaque(collector, "tar runs another program")
  if (name === "git" && gitReadsInput(stripped.words)) {
    markOpaque(
      collector,
      "git reads object names or paths (REV:path among them) from its input, which the analysis cannot see"
    )
  }
  if (name === "install" && stripped.words.some((word) => (word.value ?? word.source).startsWith("--strip-"))) {
    markOpaque(collector, "install --strip-program runs another program")
  }
  if (stripped.wrappers.includes("xargs")) {
    markOpaque(collector, `xargs gives ${name} paths the analysis cannot see`)
  }
  if (name === "sed") {
    const risk = sedRisk(stripped.words)
    if (risk !== undefined) markOpaque(collector, risk)
  }
  const words = pathWords(name, stripped.words, collector.piped > 0)
  const paths: Array<PathArgument> = []
  for (const [word, access, recursive, into, onlyIf, fromTop] of words) {
    if (word.value === "-") continue
    const argument = pathArgumentOf(word, access, recursive === true, into, onlyIf, fromTop)
    if (typeof argument === "string") {
      markOpaque(collector, argument)
      continue
    }
    if (!isCd && isHarmlessArgument(name, argument)) continue
    if (word.value === undefined) collector.expandedPath ??= word.source
    if (collector.lostCwd !== undefined && isRelativeTarget(argument.path)) {
      markOpaque(collector, `${collector.lostCwd}, and ${word.source} is relative to it`)
    }
    paths.push(argument)
  }
  if (isCd) {
    const target = words[0]?.[0]
    const next = target === undefined
      ? cwdsAfter(collector.cwds, "~")
      : paths[0] === undefined || paths[0].path !== target.value
      ? undefined
      : cwdsAfter(collector.cwds, paths[0].path)
    if (next === undefined || collector.loops > 0) {
      const shown = target === undefined ? name : `${name} ${target.source}`
      collector.lostCwd ??= `${shown} moves the shell where the analysis cannot follow`
      // In a loop the next round runs the commands before the `cd` in the new place too.
      if (collector.loops > 0) collector.cdInLoop = true
    } else {
      collector.cwds = next
    }
  }
  return paths
}

/** Where the command run by `sudo`, `doas`, `setsid`, `ionice`, `taskset`, `chrt` or `unbuffer` starts. */
const innerCommandStart = (words: ReadonlyArray<string | undefined>): number | undefined => {
  const name = words[0]
  const withValue = name === undefined ? undefined : RUNNER_OPTIONS[name]
  if (withValue === undefined) return undefined
  let i = 1
  while (i < words.length) {
    const w = words[i]
    if (w === undefined) return undefined
    if (w === "--") return i + 1 < words.length ? i + 1 : undefined
    if (!w.startsWith("-")) break
    i += withValue.includes(w) ? 2 : 1
  }
  // taskset takes a CPU mask and chrt a priority before the command.
  if ((name === "taskset" || name === "chrt") && i < words.length) i += 1
  return i < words.length ? i : undefined
}

/** Wrappers that run a command given as words, and their options that take a value. */
const RUNNER_OPTIONS: Record<string, ReadonlyArray<string>> = {
  sudo: ["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group", "--host", "--prompt"],
  doas: ["-u", "-C"],
  setsid: [],
  ionice: ["-c", "-n", "--class", "--classdata"],
  taskset: [],
  chrt: [],
  unbuffer: [],
  coproc: []
}

/** Builtins and tools that keep a string to run as a command. */
const STRING_RUNNERS = new Set(["trap", "enable", "bind", "complete", "compgen", "watch", "fc"])

/** The simple commands directly under `node` that a redirect on `node` belongs to. */
const lastCommandsOf = (node: SyntaxNode): "last" | "all" => {
  const type = node.type
  return type === "list" || type === "pipeline" ? "last" : "all"
}

const walk = (node: SyntaxNode, redirects: ReadonlyArray<Redirect>, collector: Collector): void => {
  const type = node.type
  switch (type) {
    case "command": {
      // namedChildren builds its array from the wasm tree on every read: read once.
      const children = node.namedChildren
      const extra = collector.trailing.get(node.id)
      const before = collector.commands.length
      // The trailing words' substitutions were walked with their redirection.
      simpleCommand(extra === undefined ? children : [...children, ...extra], redirects, collector)
      if (node.id === collector.statusNodeId && collector.commands.length > before) {
        collector.statusCommand = collector.commands[collector.commands.length - 1]
      }
      for (const child of children) if (child !== null) walkInner(child, collector)
      return
    }
    case "redirected_statement": {
      const own: Array<Redirect> = []
      const extra: Array<SyntaxNode> = []
      for (const child of node.childrenForFieldName("redirect")) {
        if (child === null) continue
        const redirect = redirectOf(child, collector)
        if (redirect !== undefined) own.push(redirect)
        extra.push(...trailingWords(child))
        walkInner(child, collector)
      }
      const body = node.childForFieldName("body")
      if (body === null) return
      // `cat < /dev/null secrets/key` and `rm 2>/dev/null -rf x`: the grammar hangs the words after a
      // redirection on it, but they are the command's arguments (of the last command of a pipeline or list).
      if (extra.length > 0) {
        let last: SyntaxNode | null | undefined = body
        while (last !== null && last !== undefined && lastCommandsOf(last) === "last") {
          last = last.namedChildren.at(-1)
        }
        if (last?.type === "command") collector.trailing.set(last.id, extra)
        else {
          markOpaque(collector, `the words after a redirection in ${node.text} belong to no command the analysis sees`)
        }
      }
      if (lastCommandsOf(body) === "last") {
        const parts = body.namedChildren.filter((c): c is SyntaxNode => c !== null)
        parts.forEach((part, index) => {
          const piped = body.type === "pipeline" && index > 0
          if (piped) collector.piped++
          walk(part, index === parts.length - 1 ? [...redirects, ...own] : redirects, collector)
          if (piped) collector.piped--
        })
        collector.redirects.push(...own)
        return
      }
      walk(body, [...redirects, ...own], collector)
      collector.redirects.push(...own)
      return
    }
    case "function_definition":
      markOpaque(collector, "the line defines a shell function")
      break
    case "command_substitution":
      markOpaque(collector, "command substitution runs a command whose output becomes part of the line")
      break
    case "process_substitution":
      markOpaque(collector, "process substitution runs a command the line reads or writes")
      break
    case "declaration_command":
    case "unset_command": {
      const keyword = node.children[0]?.type ?? "declare"
      collector.setsVariables = true
      const words: Array<Word> = [{ value: keyword, source: keyword }]
      for (const child of node.namedChildren) {
        if (child === null) continue
        const childType = child.type
        if (childType === "variable_assignment" || childType === "variable_name" || childType === "word") {
          const name = childType === "variable_assignment" ? child.childForFieldName("name")?.text ?? "" : child.text
          if (DANGEROUS_ENV.test(name)) markOpaque(collector, `${keyword} ${name} changes what later commands run`)
          words.push(wordOf(child))
        }
      }
      addCommand(words, [], redirects, collector)
      for (const child of node.namedChildren) if (child !== null) walkInner(child, collector)
      return
    }
    case "variable_assignment": {
      collector.setsVariables = true
      const name = node.childForFieldName("name")?.text ?? ""
      if (DANGEROUS_ENV.test(name)) markOpaque(collector, `setting ${name} changes what later commands run`)
      break
    }
    case "pipeline": {
      node.namedChildren.forEach((part, index) => {
        if (part === null) return
        if (index > 0) collector.piped++
        walk(part, redirects, collector)
        if (index > 0) collector.piped--
      })
      return
    }
    case "for_statement":
    case "c_style_for_statement":
    case "while_statement":
      collector.setsVariables ||= type !== "while_statement"
      collector.loops++
      for (const child of node.namedChildren) if (child !== null) walk(child, redirects, collector)
      collector.loops--
      return
    case "ERROR":
      markOpaque(collector, "the command could not be parsed")
      break
  }
  for (const child of node.namedChildren) if (child !== null) walk(child, redirects, collector)
}

/** Walks a command's arguments for substitutions (commands hidden inside words). */
const walkInner = (node: SyntaxNode, collector: Collector): void => {
  const type = node.type
  if (
    type === "command_substitution" || type === "process_substitution" || type === "command" ||
    type === "pipeline" || type === "list" || type === "redirected_statement"
  ) {
    walk(node, [], collector)
    return
  }
  for (const child of node.namedChildren) if (child !== null) walkInner(child, collector)
}

/** Whether a redirection target depends on the directory the shell is in. */
export const isRelativeTarget = (target: string | undefined): target is string =>
  target !== undefined && !path.isAbsolute(target) && !target.startsWith("~")

const opaqueAnalysis = (reason: string): Analysis => ({
  commands: [],
  redirects: [],
  opaque: reason,
  readOnly: false,
  changesDirectory: false,
  exitOneMeans: undefined
})

/** The statements of a body, comments left out. */
const statementsOf = (node: SyntaxNode): Array<SyntaxNode> =>
  node.namedChildren.filter((child): child is SyntaxNode => child !== null && child.type !== "comment")

/**
 * The command whose exit status is the whole line's: the line's only statement, or the last command of its
 * only pipeline (redirections around either do not change the status). Lists (`a && b`, `a; b`), negations,
 * subshells and compound commands have none.
 */
const statusNode = (root: SyntaxNode): SyntaxNode | undefined => {
  const unredirected = (node: SyntaxNode | undefined) =>
    node?.type === "redirected_statement" ? node.childForFieldName("body") ?? undefined : node
  const statements = statementsOf(root)
  if (statements.length !== 1) return undefined
  let node = unredirected(statements[0])
  if (node?.type === "pipeline") node = unredirected(statementsOf(node).at(-1))
  return node?.type === "command" || node?.type === "test_command" ? node : undefined
}

/**
 * Exit status 1 of these commands is an answer, not a failure; Claude Code reads them the same way. Exit 2 or
 * more is still an error (grep's "No such file", diff's "missing operand").
 */
const EXIT_ONE_MEANINGS: Readonly<Record<string, string>> = {
  grep: "No matches found",
  egrep: "No matches found",
  fgrep: "No matches found",
  rg: "No matches found",
  diff: "Files differ",
  test: "Condition is false",
  "[": "Condition is false",
  find: "Some directories were inaccessible"
}

const exitOneMeaning = (root: SyntaxNode, command: SimpleCommand | undefined): string | undefined => {
  // `[ … ]` and `[[ … ]]` are their own kind of node, with no simple command inside.
  if (command === undefined) {
    const only = statementsOf(root)[0]
    return only?.type === "test_command" ? EXIT_ONE_MEANINGS.test : undefined
  }
  // xargs exits 1 for its own errors (its commands' failures are 123).
  if (command.wrappers.includes("xargs")) return undefined
  const name = command.words[0]
  return name === undefined ? undefined : EXIT_ONE_MEANINGS[path.basename(name)]
}

/** Recent analyses: the policy, the scheduler and the tool each ask about the same line in one call. */
const recent = new Map<string, Analysis>()
const RECENT_MAX = 256

/** Analyses a command line; needs `load` to have run (until then every line is opaque). */
export const analyze = (command: string): Analysis => {
  const cached = recent.get(command)
  if (cached !== undefined) return cached
  const analysis = analyzeUncached(command)
  if (parser === undefined) return analysis
  if (recent.size >= RECENT_MAX) recent.delete(recent.keys().next().value!)
  recent.set(command, analysis)
  return analysis
}

const analyzeUncached = (command: string): Analysis => {
  if (command.length > MAX_COMMAND_LENGTH) {
    return opaqueAnalysis(`the command is longer than ${MAX_COMMAND_LENGTH} characters`)
  }
  if (parser === undefined) return opaqueAnalysis("the bash parser is not loaded")
  // Bash removes a backslash-newline before it splits words (`r\<newline>m` is `rm`); the grammar does not.
  // An escaped backslash before a newline (`a\\<newline>`) is not a continuation: the newline separates.
  const tree = parser.parse(command.replace(/(^|[^\\])((?:\\\\)*)\\\r?\n/g, "$1$2"))
  if (tree === null) return opaqueAnalysis("the command could not be parsed")
  try {
    const root = tree.rootNode
    const collector: Collector = {
      commands: [],
      redirects: [],
      opaque: undefined,
      changesDirectory: false,
      cwds: START,
      lostCwd: undefined,
      cdInLoop: false,
      loops: 0,
      setsVariables: false,
      expandedPath: undefined,
      statusNodeId: root.hasError ? undefined : statusNode(root)?.id,
      statusCommand: undefined,
      piped: 0,
      trailing: new Map()
    }
    if (root.hasError) markOpaque(collector, "the command could not be parsed (unbalanced quotes or syntax error)")
    walk(root, [], collector)
    const relative = collector.commands.find((c) => c.paths.some((p) => isRelativeTarget(p.path)))
    if (collector.cdInLoop && relative !== undefined) {
      markOpaque(collector, `${collector.lostCwd} in a loop, and ${relative.text} names a relative path`)
    }
    if (collector.setsVariables && collector.expandedPath !== undefined) {
      markOpaque(collector, `the path ${collector.expandedPath} depends on a variable the line itself sets`)
    }
    const redirects = collector.redirects.concat(
      collector.commands.flatMap((c) => c.redirects).filter((r) => !collector.redirects.includes(r))
    )
    if (collector.changesDirectory && redirects.some((r) => isRelativeTarget(r.target))) {
      markOpaque(collector, "the line changes directory and redirects to a relative path")
    }
    const readOnly = collector.opaque === undefined &&
      collector.commands.every((c) => c.readOnly) &&
      !redirects.some((r) => r.access === "write")
    return {
      commands: collector.commands,
      redirects,
      opaque: collector.opaque,
      readOnly,
      changesDirectory: collector.changesDirectory,
      exitOneMeans: collector.statusNodeId === undefined ? undefined : exitOneMeaning(root, collector.statusCommand)
    }
  } finally {
    tree.delete()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Rules

/** CLIs whose first argument is a sub-command worth keeping in a rule (`git commit`, `npm install`). */
const SUBCOMMAND_CLIS = new Set([
  "git", "npm", "pnpm", "yarn", "bun", "deno", "cargo", "go", "docker", "podman", "kubectl", "helm", "make", "pip",
  "pip3", "uv", "poetry", "gh", "dotnet", "mvn", "gradle", "terraform", "aws", "gcloud", "az", "brew", "apt", "apt-get",
  "systemctl", "rustup", "composer", "bundle", "rake", "mix", "swift", "zig", "nx", "turbo", "npx", "pnpx", "bunx"
])
/** Sub-commands that take a script or target name worth keeping too (`npm run test`). */
const RUNNERS = new Set(["run", "exec", "x", "run-script", "test", "dlx"])
const SUBCOMMAND = /^[A-Za-z][\w:.@/-]*$/

/** The prefix an "allow always" rule should use for one command: `npm run test`, `git commit`, `rm`. */
export const rulePrefix = (words: ReadonlyArray<string>): string => {
  // `sudo rm`, not `sudo`: a rule for the wrapper alone would allow every command under it.
  const inner = innerCommandStart(words)
  if (inner !== undefined) return [...words.slice(0, inner), rulePrefix(words.slice(inner))].join(" ")
  const name = words[0] ?? ""
  const prefix = [name]
  if (SUBCOMMAND_CLIS.has(name) && words[1] !== undefined && SUBCOMMAND.test(words[1])) {
    prefix.push(words[1])
    if (RUNNERS.has(words[1]) && words[2] !== undefined && SUBCOMMAND.test(words[2])) prefix.push(words[2])
  }
  return prefix.join(" ")
}

/**
 * "Allow always" rules for a command line: one `Bash(prefix:*)` per sub-command that is not read-only, at
 * most five; none for a line the analysis cannot see through (approving it once must not approve more).
 */
export const suggestRules = (command: string): Array<string> => {
  const analysis = analyze(command)
  if (analysis.opaque !== undefined) return []
  const rules: Array<string> = []
  for (const c of analysis.commands) {
    // A command that only reads needs no rule; a redirection it writes through is approved as an Edit.
    if (c.words.length === 0 || readOnlyWords(c.words)) continue
    const prefix = rulePrefix(c.words)
    const rule = prefix === c.words.join(" ") ? `Bash(${prefix})` : `Bash(${prefix}:*)`
    if (!rules.includes(rule)) rules.push(rule)
    if (rules.length === 5) break
  }
  return rules
}
