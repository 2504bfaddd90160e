import * as os from "node:os"
import * as path from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"

import { ruleSubjects } from "../../src/bash/BashTool.js"
import * as CommandSemantics from "../../src/bash/commandSemantics.js"

const load = Effect.runPromise(CommandSemantics.load)
const analyze = async (command: string) => {
  await load
  return CommandSemantics.analyze(command)
}
const specifiers = async (command: string) => (await analyze(command)).commands.map((c) => c.text)

describe("commandSemantics", () => {
  it("extracts every simple command of a compound line", async () => {
    for (const separator of [" && ", " || ", "; ", " | ", " |& ", " & ", "\n"]) {
      assert.deepStrictEqual(await specifiers(`git status${separator}rm -rf build`), ["git status", "rm -rf build"])
    }
    assert.deepStrictEqual(await specifiers("(cd x; ls) && { pwd; } || ! false"), ["cd x", "ls", "pwd", "false"])
    assert.deepStrictEqual(await specifiers("for f in *.ts; do wc -l $f; done"), ["wc -l $f"])
    assert.deepStrictEqual(await specifiers("if test -f a; then cat a; else touch a; fi"), [
      "test -f a",
      "cat a",
      "touch a"
    ])
  })

  it("finds the commands inside substitutions, and marks the line opaque", async () => {
    for (const command of ["echo $(rm -rf x)", "echo `rm -rf x`", "cat <(rm -rf x)", "echo \"$(rm -rf x)\""]) {
      const analysis = await analyze(command)
      assert.include(analysis.commands.map((c) => c.text), "rm -rf x", command)
      assert.isDefined(analysis.opaque, command)
      assert.isFalse(analysis.readOnly)
    }
  })

  it("unquotes words, re-quotes what needs it, strips wrappers and env prefixes", async () => {
    assert.deepStrictEqual(await specifiers(`rm "-rf" 'build'`), ["rm -rf build"])
    assert.deepStrictEqual(await specifiers(`git commit -m "a message; rm -rf /"`), [
      `git commit -m 'a message; rm -rf /'`
    ])
    assert.deepStrictEqual(await specifiers("FOO=1 BAR=2 npm test"), ["npm test"])
    assert.deepStrictEqual(
      await specifiers("timeout -s KILL 5 time -p nice -n 5 nohup stdbuf -oL env X=1 -u Y npm test"),
      ["npm test"]
    )
    assert.deepStrictEqual(await specifiers("find . -name '*.ts' | xargs wc -l"), ["find . -name '*.ts'", "wc -l"])
    const wrapped = (await analyze("timeout 5 nice rm x")).commands[0]!
    assert.deepStrictEqual(wrapped.wrappers, ["timeout", "nice"])
  })

  it("attaches a redirection to the command bash gives it to", async () => {
    const analysis = await analyze("make && cat log > out.txt 2>/dev/null")
    assert.deepStrictEqual(analysis.commands.map((c) => [c.text, c.redirects.map((r) => r.target)]), [
      ["make", []],
      ["cat log", ["out.txt"]]
    ])
    assert.deepStrictEqual(analysis.redirects, [{ operator: ">", target: "out.txt", access: "write" }])
    const group = await analyze("{ ls; pwd; } >> all.txt")
    assert.deepStrictEqual(group.commands.map((c) => c.redirects.length), [1, 1])
  })

  it("classifies read-only lines the way issue 7 lists them", async () => {
    const readOnly = [
      "ls -la", "cat a.txt | grep foo | wc -l", "git status", "git log --oneline -5", "git diff HEAD~1",
      "git branch", "find . -name '*.ts'", "rg TODO src", "head -5 a && tail -5 b", "ls > /dev/null 2>&1",
      "cd src && ls", "tree -L 2", "du -sh .", "jq .name package.json", "sort a | uniq -c", "command -v git",
      "which node", "stat -c %s file", "cat < input.txt"
    ]
    for (const command of readOnly) assert.isTrue((await analyze(command)).readOnly, command)
    const writes = [
      "rm x", "echo hi > out.txt", "ls >> log", "git commit -m x", "git branch -D main", "find . -delete",
      "sort -o out in", "awk 'BEGIN{system(\"rm x\")}'", "npm test", "mv a b", "touch a", "git push",
      "cat a | tee b", "git diff --output=patch.txt", "uniq in out", "ls &> all.log", "awk -f prog.awk data",
      "sort --compress-program=gzip big", "sort -uo out in", "tree -ao out .", "sort --outp=out in", "sort --compress-prog=gzip big",
      "awk -E prog.awk data", "awk --fil=prog.awk data", "awk -i lib.awk 1 data", "awk -l ext 1 data",
      "awk '@include \"lib\"; {print}' data"
    ]
    for (const command of writes) assert.isFalse((await analyze(command)).readOnly, command)
    assert.deepStrictEqual((await analyze("rg x; ls; cat y; rm z")).commands.map((c) => c.kind), [
      "search", "list", "read", "silent"
    ])
  })

  it("makes opaque whatever could hide the real command (the bypass corpus)", async () => {
    const opaque: Record<string, string> = {
      "bash -c 'rm -rf x'": "bash -c runs a string as a command",
      "sh -c \"rm -rf x\"": "sh -c runs a string as a command",
      "eval 'rm -rf x'": "eval runs a string as a command",
      "exec rm -rf x": "exec replaces the shell with another command",
      "$'\\x72m' -rf x": "the command name $'\\x72m' is not a plain word",
      "\\rm -rf x": "the command name \\rm is quoted or escaped",
      "'rm' -rf x": "the command name 'rm' is quoted or escaped",
      "r\"m\" -rf x": "the command name r\"m\" is quoted or escaped",
      "$CMD -rf x": "the command name $CMD is not a plain word",
      "{rm,-rf,x}": "the command could not be parsed (unbalanced quotes or syntax error)",
      "r{m,} -rf x": "the command name r{m,} is expanded by bash",
      "command rm -rf x": "command bypasses aliases and functions",
      "cat <<EOF | bash\nrm -rf x\nEOF": "bash runs commands from its input",
      "bash <<< 'rm -rf x'": "bash runs commands from its input",
      "find . -exec rm {} \\;": "find -exec runs other commands",
      "git -c core.pager='rm -rf x' log": "git -c can make git run other commands",
      "echo 'unterminated": "the command could not be parsed (unbalanced quotes or syntax error)",
      "ls; f() { rm -rf x; }": "the line defines a shell function",
      "PATH=/tmp/evil ls": "the prefix PATH=… changes what the command runs",
      "export LD_PRELOAD=/tmp/x.so; ls": "export LD_PRELOAD changes what later commands run",
      // GLOBIGNORE turns on dotglob: `*` then matches .git, which the path arguments' glob matching skips.
      "GLOBIGNORE=x; rm -rf *": "setting GLOBIGNORE changes what later commands run",
      "xargs -I{} rm {}": "xargs with options runs a command the analysis cannot see",
      "env -S 'rm -rf x'": "env has options the analysis does not understand",
      "echo x > $TARGET": "the redirection target $TARGET is not a plain path",
      "echo x > /etc/pass*": "the redirection target /etc/pass* is a pattern bash expands",
      "echo x > ~root/.bashrc": "the redirection target ~root/.bashrc names another user's home",
      "cd /etc && echo x > passwd": "the line changes directory and redirects to a relative path",
      "source ./script.sh": "source runs the commands of a file",
      "hash -p /bin/rm ls; ls x": "hash -p changes which program a command name runs",
      "git --exec-path=/tmp/evil status": "git --exec-path makes git run programs from another directory",
      [`echo ${"a".repeat(10_001)}`]: "the command is longer than 10000 characters"
    }
    for (const [command, reason] of Object.entries(opaque)) {
      const analysis = await analyze(command)
      assert.strictEqual(analysis.opaque, reason, command)
      assert.isFalse(analysis.readOnly, command)
    }
    // `command rm` and `\rm` still show `rm`, so a deny rule on rm matches as well as the ask.
    assert.deepStrictEqual(await specifiers("command rm -rf x"), ["rm -rf x"])
    assert.deepStrictEqual(await specifiers("\\rm -rf x"), ["rm -rf x"])
  })

  it("a sed script, tar or install that reads or writes files or runs commands out of sight is opaque", async () => {
    const escapes = "sed's script may write or read files or run commands (w, W, r, R, e, or the s command's w and " +
      "e flags), which the analysis does not follow"
    const opaque: Record<string, string> = {
      "sed -n 'w .git/config' f": escapes,
      "sed '1e touch /tmp/pwn' f": escapes,
      "sed 's/a/b/w out' f": escapes,
      "sed -n 's/a/b/gpe' f": escapes,
      "sed -e p -e '$W log' f": escapes,
      "sed --expression='/x/r secrets/key' f": escapes,
      "sed --expr '1R /etc/shadow' f": escapes,
      "sed -ne '2,/end/ { s|a|b|; w x' -e '}' f": escapes,
      "sed -i.bak '1!G;h;$!d;e date' f": escapes,
      "sed 's/a/b' f": escapes,
      "timeout 5 sed -- 'w x' f": escapes,
      "sed -f script.sed f": "sed -f runs a script file the analysis cannot see into",
      "tar -xf a.tar --to-command='sh -c x'": "tar runs another program",
      "tar -I 'sh -c x' -xf a.tar": "tar runs another program",
      "tar xIf prog a.tar": "tar runs another program",
      "install --strip-program=./evil -s a b": "install --strip-program runs another program",
      "sed --file=script.sed f": "sed -f runs a script file the analysis cannot see into",
      "sed \"$SCRIPT\" f": "sed's script is built from a value the analysis cannot know",
      "sed -e\"$S\" f": "sed's script is built from a value the analysis cannot know"
    }
    for (const [command, reason] of Object.entries(opaque)) {
      assert.strictEqual((await analyze(command)).opaque, reason, command)
    }
    const plain = [
      "sed -n 's/a/b/p' f",
      "sed -i 's/x/y/g' f",
      "sed '1,5d' f",
      "sed -E 's/(w)e/\\1/gI; /^#/d; $a end w x' f",
      "sed -n '/start/,/stop/{p;q}' f",
      "sed 'y/abc/xyz/;:top;s/we//;t top' f",
      "sed -e '1i header' -e '10q' f",
      "sed -l 70 -n l f",
      "sed --quiet -s -z '0~3p' f"
    ]
    for (const command of [...plain, "tar -xzvf a.tgz -C out", "install -s a b"]) {
      assert.isUndefined((await analyze(command)).opaque, command)
    }
    assert.deepStrictEqual((await analyze("sed -i 's/x/y/g' f")).commands[0]!.paths, [{ path: "f", access: "write" }])
  })

  it("a git sub-command's option that names a program to run makes the line opaque", async () => {
    const runs = (what: string) => `${what} runs the given command`
    // git takes any unambiguous prefix of a long option (`--upl`, `--e`) and clusters short ones (`-qx`, `-xCMD`).
    const opaque: Record<string, string> = {
      "git fetch --upload-pack=./evil origin": runs("git fetch --upload-pack"),
      "git fetch --upload-pack ./evil origin": runs("git fetch --upload-pack"),
      "git fetch --upl=./evil origin": runs("git fetch --upload-pack"),
      "git -C sub fetch origin --upload-pack ./evil": runs("git fetch --upload-pack"),
      "git pull --upload-pack=./evil origin main": runs("git pull --upload-pack"),
      "git ls-remote --upload-pack ./evil origin": runs("git ls-remote --upload-pack"),
      "git ls-remote --exec=./evil origin": runs("git ls-remote --exec"),
      "git fetch-pack --exec=./evil ../r": runs("git fetch-pack --exec"),
      "git clone --upload-pack=./evil ../r c": runs("git clone --upload-pack"),
      "git clone -u ./evil ../r c": runs("git clone -u"),
      "git clone -u./evil ../r c": runs("git clone -u"),
      "git clone -qu ./evil ../r c": runs("git clone -u"),
      "git push --receive-pack=./evil origin main": runs("git push --receive-pack"),
      "git push --receive-pack ./evil origin main": runs("git push --receive-pack"),
      "git push --rece=./evil origin main": runs("git push --receive-pack"),
      "git push --exec=./evil origin main": runs("git push --exec"),
      "git push --e ./evil origin main": runs("git push --exec"),
      "git send-pack --receive-pack=./evil ../r main": runs("git send-pack --receive-pack"),
      "git archive --remote=../r --exec=./evil HEAD": runs("git archive --exec"),
      "git archive --remote ../r --exec ./evil HEAD": runs("git archive --exec"),
      "git rebase --exec 'make test' main": runs("git rebase --exec"),
      "git rebase --exec='make test' main": runs("git rebase --exec"),
      "git rebase --ex=./evil main": runs("git rebase --exec"),
      "git rebase -x ./evil main": runs("git rebase -x"),
      "git rebase -x./evil main": runs("git rebase -x"),
      "git rebase -ix ./evil main": runs("git rebase -x"),
      "git bisect run ./evil": runs("git bisect run"),
      "git submodule foreach 'rm -rf x'": runs("git submodule foreach"),
      "git submodule --quiet foreach --recursive ./evil": runs("git submodule foreach"),
      "git difftool -y -x ./evil": runs("git difftool -x"),
      "git difftool -yx ./evil": runs("git difftool -x"),
      "git difftool -x./evil HEAD": runs("git difftool -x"),
      "git difftool --extcmd=./evil": runs("git difftool --extcmd"),
      "git difftool --extcmd ./evil": runs("git difftool --extcmd"),
      "git filter-branch --tree-filter 'rm -rf x' HEAD": runs("git filter-branch --tree-filter"),
      "git filter-branch --index-filter ./evil HEAD": runs("git filter-branch --index-filter"),
      "git filter-branch --msg-filter ./evil HEAD": runs("git filter-branch --msg-filter"),
      "git filter-branch --commit-filter ./evil HEAD": runs("git filter-branch --commit-filter"),
      "git filter-branch --env-filter ./evil HEAD": runs("git filter-branch --env-filter"),
      "git filter-branch --parent-filter ./evil HEAD": runs("git filter-branch --parent-filter"),
      "git filter-branch -f --tag-name-filter cat HEAD": runs("git filter-branch --tag-name-filter"),
      "git filter-branch --setup ./evil --prune-empty HEAD": runs("git filter-branch --setup"),
      // grep is read-only, so without -O's program it runs with no rule at all.
      "git grep -O./evil TODO": runs("git grep -O"),
      "git grep -iO./evil TODO": runs("git grep -O"),
      "git grep --open-files-in-pager=./evil TODO": runs("git grep --open-files-in-pager"),
      "git grep --open=./evil TODO": runs("git grep --open-files-in-pager"),
      "git send-email --to-cmd=./evil p.patch": runs("git send-email --to-cmd"),
      "git send-email --cc-cmd ./evil p.patch": runs("git send-email --cc-cmd"),
      "git send-email --header-cmd=./evil p.patch": runs("git send-email --header-cmd"),
      "git send-email --sendmail-cmd=./evil p.patch": runs("git send-email --sendmail-cmd"),
      "git send-email --smtp-server=/tmp/evil p.patch": runs("git send-email --smtp-server"),
      "git clone --template=./tpl ../r c": "git clone --template copies hooks that git runs later",
      "git clone --temp ./tpl ../r c": "git clone --template copies hooks that git runs later",
      "git init --template ./tpl": "git init --template copies hooks that git runs later",
      "git clone -c core.hooksPath=./h ../r c": "git clone -c can make git run other commands",
      "git clone -qc core.hooksPath=./h ../r c": "git clone -c can make git run other commands",
      "git clone -ccore.hooksPath=./h ../r c": "git clone -c can make git run other commands",
      "git clone --config core.hooksPath=./h ../r c": "git clone --config can make git run other commands",
      "git clone --config=core.hooksPath=./h ../r c": "git clone --config can make git run other commands",
      "git clone --conf=core.hooksPath=./h ../r c": "git clone --config can make git run other commands",
      // A sub-command that is not a plain word may be any of them.
      "git $SUB --upload-pack=./evil origin": runs("git $SUB --upload-pack"),
      "git \"$SUB\" run ./evil": runs("git \"$SUB\" run")
    }
    for (const [command, reason] of Object.entries(opaque)) {
      const analysis = await analyze(command)
      assert.strictEqual(analysis.opaque, reason, command)
      assert.isFalse(analysis.readOnly, command)
    }
    // The same words as operands or other options, and options that only name a configured tool or the pager.
    const plain = [
      "git fetch origin",
      "git fetch -u origin main",
      "git fetch --update-shallow origin",
      "git pull --rebase origin main",
      "git push origin main",
      "git push --repo=origin",
      "git rebase main",
      "git rebase -i --autosquash main",
      "git rebase -X theirs main",
      "git rebase -s ours -Xpatience main",
      "git clone ../r c",
      "git clone -b main -o up --depth 1 ../r c",
      "git clone -j4 ../r c",
      "git init -b main",
      "git archive --remote=../r HEAD",
      "git bisect start HEAD HEAD~3",
      "git bisect good",
      "git submodule update --init --recursive",
      "git submodule status foreach",
      "git difftool -y --tool=vimdiff",
      "git difftool -t meld HEAD",
      "git mergetool --tool=meld",
      "git filter-branch --subdirectory-filter lib HEAD",
      "git grep -O TODO",
      "git send-email --to=dev@example.com --cc=x@example.com p.patch",
      "git commit -m 'add --upload-pack and -x'",
      "git log --grep=--exec"
    ]
    for (const command of plain) assert.isUndefined((await analyze(command)).opaque, command)
    assert.isTrue((await analyze("git grep -O TODO")).readOnly)
  })

  it("sees the command a line continuation, a runner wrapper or coproc hides", async () => {
    assert.deepStrictEqual(await specifiers("r\\\nm -rf x"), ["rm -rf x"])
    assert.deepStrictEqual(await specifiers("echo a\\\\\nrm -rf x"), ["echo 'a\\'", "rm -rf x"])
    assert.deepStrictEqual(await specifiers("docker run \\\n  --rm node"), ["docker run --rm node"])
    assert.deepStrictEqual(await specifiers("coproc rm -rf x"), ["coproc rm -rf x", "rm -rf x"])
    assert.deepStrictEqual(await specifiers("/bin/rm -rf x"), ["/bin/rm -rf x", "rm -rf x"])
    assert.deepStrictEqual(await specifiers("./node_modules/.bin/vitest run"), [
      "./node_modules/.bin/vitest run",
      "vitest run"
    ])
    assert.deepStrictEqual(await specifiers("sudo -u root rm -rf x"), ["sudo -u root rm -rf x", "rm -rf x"])
    assert.deepStrictEqual(await specifiers("setsid -f nice rm -rf x"), ["setsid -f nice rm -rf x", "rm -rf x"])
    assert.deepStrictEqual(await specifiers("taskset 0x1 rm -rf x"), ["taskset 0x1 rm -rf x", "rm -rf x"])
    assert.strictEqual((await analyze("trap 'rm -rf x' EXIT")).opaque, "trap runs a string as a command later")
    assert.strictEqual((await analyze("watch rm -rf x")).opaque, "watch runs a string as a command later")
    assert.strictEqual((await analyze("su -c 'rm -rf x'")).opaque, "su -c runs a string as a command")
  })

  it("rule subjects: each command, redirection targets and path arguments resolved, the opaque reason", async () => {
    await load
    assert.deepStrictEqual(ruleSubjects("git status && echo hi > out.txt 2>/dev/null; cat < in.txt", "/work"), {
      specifiers: ["git status", "echo hi", "cat"],
      paths: [{ path: "/work/out.txt", access: "write" }, { path: "/work/in.txt", access: "read" }]
    })
    assert.deepStrictEqual(ruleSubjects("cp ~/a /work/b && rm -rf ../c", "/work/p"), {
      specifiers: ["cp ~/a /work/b", "rm -rf ../c"],
      paths: [
        { path: path.join(os.homedir(), "a"), access: "read", argument: true },
        { path: "/work/b", access: "write", argument: true },
        { path: "/work/c", access: "write", argument: true }
      ]
    })
    assert.deepStrictEqual(ruleSubjects("eval ls", "/work"), {
      specifiers: ["eval ls"],
      paths: [],
      opaque: "eval runs a string as a command"
    })
  })

  it("path arguments: options and their values skipped, patterns and programs too, each with its access", async () => {
    // `tree`: the command writes everything under the path when it is a directory.
    const paths = async (command: string) =>
      (await analyze(command)).commands.flatMap((c) =>
        c.paths.map((p) =>
          [
            p.access,
            p.path,
            ...(p.pattern === undefined ? [] : [p.pattern]),
            ...(p.recursive ? ["tree"] : []),
            ...(p.into === undefined ? [] : [`into ${p.into.join(",")}`])
          ]
            .join(" ")
        )
      )
    const cases: Record<string, Array<string>> = {
      "head -n 5 src/a.ts": ["read src/a.ts"],
      "tail -fn20 -- -log": ["read -log"],
      "grep -rn -A 3 foo src lib": ["read src tree", "read lib tree"],
      "grep -e foo -f pats.txt x": ["read pats.txt", "read x"],
      "rg --glob '*.ts' -t ts TODO src": ["read src tree"],
      "rg --files /etc": ["read /etc tree"],
      "jq -r --arg n v --slurpfile s data.json '.a' p.json": ["read data.json", "read p.json"],
      "jq -n --args '$ARGS' a b": [],
      "awk -F: '{print $1}' /etc/passwd": ["read /etc/passwd"],
      "find src ../lib -name '*.ts' -newer x": ["read src", "read ../lib"],
      "find -L . -type f": ["read ."],
      "sed -i.bak 's/a/b/' f": ["write f"],
      "sed -n -e p f": ["read f"],
      "cp -r a b dest": ["read a tree", "read b tree", "write dest tree into a,b"],
      "cp -r evil/. . && cp -rT sub . && cp -R sub/.claude .": [
        "read evil/. tree", "write . tree", "read sub tree", "write . tree into sub", "read sub/.claude tree",
        "write . tree into .claude"
      ],
      "cp -t dest -r a": ["write dest tree into a", "read a tree"],
      "cp -t dest a": ["write dest into a", "read a"],
      "cp a b": ["read a", "write b into a"],
      "cp -aT a b && cp --arch -t d c": ["read a tree", "write b tree into a", "write d tree into c", "read c tree"],
      "install -m 755 build/app /usr/local/bin/app": ["read build/app", "write /usr/local/bin/app into app"],
      "install -D -o me a b c": ["read a", "read b", "write c into a,b"],
      "install -Dt ~/bin a && install --target=d b": ["write ~/bin into a", "read a", "write d into b", "read b"],
      "install -d x y && install --dir -m 700 z": ["write x", "write y", "write z"],
      "tar -xzf a.tgz -C out": ["write out tree", "read a.tgz"],
      "tar xf a.tar -C out && tar xfC a.tar out2": ["write out tree", "read a.tar", "write out2 tree", "read a.tar"],
      "tar -C out -x -f a.tar && tar --extract --file=a.tar --directory=o2 && tar --ext -f a --dir o3": [
        "write out tree", "read a.tar", "write o2 tree", "read a.tar", "write o3 tree", "read a"
      ],
      "tar -xf a.tar && tar xf a.tar && tar --extract -f a.tar && tar --get -f a.tar": [
        "write . tree", "read a.tar", "write . tree", "read a.tar", "write . tree", "read a.tar", "write . tree",
        "read a.tar"
      ],
      "tar -tf a.tar && tar tvf a.tar": ["read a.tar", "read a.tar"],
      // Creating, appending or updating writes the archive: `tar -cf .git/hooks/post-checkout x` is a write there.
      "tar -czf a.tgz -C src .": ["read src", "write a.tgz", "read src/. tree"],
      "tar -rf .git/hooks/x a && tar --create --file=o.tar b && tar cvf -  c": [
        "write .git/hooks/x", "read a tree", "write o.tar", "read b tree", "read c tree"
      ],
      // What goes into an archive is read whole, relative to the -C directory before it.
      "tar -cf out.tar secrets && tar -C a -czf o.tgz . -C /etc ssl && tar cf o.tar -- -x": [
        "write out.tar", "read secrets tree", "read a", "read /etc", "write o.tgz", "read a/. tree",
        "read /etc/ssl tree", "write o.tar", "read -x tree"
      ],
      "grep -r TOP && grep --direct=recurse x d && rg TOP && du -sh && ag x && ack y": [
        "read . tree", "read d tree", "read . tree", "read . tree", "read . tree", "read . tree"
      ],
      "grep TOP f && du -a secrets": ["read f", "read secrets tree"],
      // Piped into, rg searches its input; grep -r still searches the working directory.
      "git log | rg TOP && git log | grep -r TOP && rg TOP | cat": ["read . tree", "read . tree"],
      // The grammar hangs the words after a redirection on it: they are still the command's arguments.
      "cat < /dev/null secrets/key && rm 2>/dev/null -rf d && cat <a x >b y && a | cat < c z": [
        "read secrets/key", "write d tree", "read x", "read y", "read z"
      ],
      "cat <<EOF secrets/key\nx\nEOF": ["read secrets/key"],
      // Downloads and output options write files: a name the analysis cannot know writes the directory whole.
      "curl -sSLo out.html https://h/y && curl -O https://h/a/.bashrc && curl --output-dir d -o f -O https://h/p": [
        "write out.html", "write . into .bashrc", "write d/f", "write d into p"
      ],
      "curl -OJ https://h/x && curl -D h.txt -c jar -T up.bin https://h": [
        "write . tree", "write h.txt", "write jar", "read up.bin"
      ],
      // What curl sends from files is read: `-d @file`, a form field's `=@file` or `=<file`.
      "curl -d @body.json -F 'f=@key.pem;type=text/plain' -F 'n=<note.txt' --data-urlencode q@query.txt -d a@b -d x=y https://h": [
        "read body.json", "read key.pem", "read note.txt", "read query.txt", "read b"
      ],
      "wget -O f https://h/x && wget https://h/a/b.tgz && wget -P dl https://h/ && wget -r https://h && wget -qO- h": [
        "write f", "write . into b.tgz", "write dl", "write . tree"
      ],
      "git diff --output=../x.patch && git -C sub log --output out && git format-patch -o p HEAD~1 && git archive -o a.zip HEAD": [
        "write ../x.patch", "write sub/out", "write p", "write a.zip", "read . tree"
      ],
      "unzip a.zip && unzip -o a.zip -d out && unzip -l a.zip && unzip -qdout2 a.zip && unzip -p a.zip f": [
        "read a.zip", "write . tree", "read a.zip", "write out tree", "read a.zip", "read a.zip", "write out2 tree",
        "read a.zip"
      ],
      "mv a b": ["write a tree", "write b into a"],
      "mv -t dest a b": ["write dest into a,b", "write a tree", "write b tree"],
      "chmod -x run.sh": ["write run.sh"],
      "chmod -R 777 . && chmod --recursive u+w x": ["write . tree", "write x tree"],
      "chown -R me:me dir": ["write dir tree"],
      "chgrp -hR staff d && chown me f": ["write d tree", "write f"],
      "rm -rf build && rm -fR a && rm --recursive b && rm -d -f c": [
        "write build tree", "write a tree", "write b tree", "write c"
      ],
      "rm -rf * .g*": ["write . * tree", "write . .g* tree"],
      "find . -name '*.o' -delete": ["write . tree"],
      "find -name '*.o' -delete": ["write . tree"],
      // GNU getopt takes any unambiguous prefix of a long option.
      "rm --recu -f build && chmod --rec 777 x": ["write build tree", "write x tree"],
      "cp --target=dest a && mv --targ dest b": ["write dest into a", "read a", "write dest into b", "write b tree"],
      "cp --recu --target=dest a": ["write dest tree into a", "read a tree"],
      "sed --in-pl s/a/b/ f": ["write f"],
      "sort --outp=out in": ["write out", "read in"],
      "find -L": ["read ."],
      "find src -fprint out -name x -fprintf log '%p' -fls l2 -fprint0 z": [
        "read src", "write out", "write log", "write l2", "write z"
      ],
      "dd if=/dev/zero of=disk.img bs=1M": ["read /dev/zero", "write disk.img"],
      "sort -o out.txt in.txt": ["write out.txt", "read in.txt"],
      "cat ~/.bashrc ~ - /etc/*.conf src/*/x.ts '*.ts'": [
        "read ~/.bashrc", "read ~", "read /etc *.conf", "read src */x.ts", "read *.ts"
      ],
      "cat .en* \"a b\"/c*": ["read . .en*", "read a b c*"],
      "cd sub && cat ../x": ["read sub", "read ../x"],
      "git status && echo hi && npm test": []
    }
    for (const [command, expected] of Object.entries(cases)) {
      assert.deepStrictEqual(await paths(command), expected, command)
    }
    assert.deepStrictEqual((await analyze("cd sub && cd ../other; cat x")).commands.map((c) => c.cwds), [
      ["."],
      [".", "sub"],
      [".", "sub", "../other", "sub/../other"]
    ])
  })

  const AWK_ESCAPES = "awk's program may write files or run commands (a redirection, a pipe, system(), getline <), " +
    "which the analysis does not follow"

  it("a path argument the analysis cannot pin down makes the line opaque, only for path-taking commands", async () => {
    const opaque: Record<string, string> = {
      "cat $HOME/.ssh/id_rsa": "the path $HOME/.ssh/id_rsa is built from a value the analysis cannot know",
      "rm -rf \"$DIR\"": "the path \"$DIR\" is built from a value the analysis cannot know",
      "cat ~root/.ssh/id_rsa": "the path ~root/.ssh/id_rsa names another user's home",
      "cat src/*/../../x": "the path src/*/../../x climbs out of a directory a pattern matches",
      "X=../..; cat src/$X/etc/passwd": "the path src/$X/etc/passwd depends on a variable the line itself sets",
      "cd $D && cat x": "the path $D is built from a value the analysis cannot know",
      "cd - && cat x": "cd - moves the shell where the analysis cannot follow, and x is relative to it",
      "for d in a b; do cat x; cd $d; done": "the path $d is built from a value the analysis cannot know",
      "while true; do cat x; cd y; done":
        "cd y moves the shell where the analysis cannot follow in a loop, and cat x names a relative path",
      "ls | xargs cat": "xargs gives cat paths the analysis cannot see",
      "CDPATH=/etc cd ssl": "the prefix CDPATH=… changes what the command runs",
      "shopt -s dotglob; cat *": "shopt changes which files the line's patterns match",
      "{ cat; } < a b": "the words after a redirection in { cat; } < a b belong to no command the analysis sees",
      "awk '{ print > \"out\" }' f": AWK_ESCAPES,
      "awk '{ print $1 >> $2 }' f": AWK_ESCAPES,
      "awk '{ print | \"sh\" }' f": AWK_ESCAPES,
      "gawk 'BEGIN { system(\"rm x\") }'": AWK_ESCAPES,
      "awk 'BEGIN { while ((getline l < \"/etc/shadow\") > 0) n++ }'": AWK_ESCAPES,
      "gawk -i inplace '{}' f": "awk runs a program file or library the analysis cannot see into",
      "awk \"$P\" f": "awk's program is built from a value the analysis cannot know",
      "rg --pre=./x TOP": "rg --pre runs another program on every file it searches",
      "curl -sK cfg https://h": "curl -K reads options (output files among them) from a file the analysis cannot see",
      "wget -e robots=off https://h": "wget -e and --config run settings (output files among them) the analysis cannot see",
      "unzip -: a.zip": "unzip -: extracts paths that climb out of the directory",
      "curl -o '#1/hooks/pre-commit' 'https://h/{.git,x}'": "the path '#1/hooks/pre-commit' is built from a value the " +
        "analysis cannot know",
      "sort --compress-program=./x -o out in": "sort --compress-program runs another program"
    }
    for (const [command, reason] of Object.entries(opaque)) {
      assert.strictEqual((await analyze(command)).opaque, reason, command)
    }
    const notOpaque = [
      "echo $HOME", "printf '%s' \"$PWD\"", "cat src/$X/y", "cd /etc && cat passwd", "cat *.ts",
      "awk '$1 > 5 { print $2 }' f", "awk -F'|' -v OFS='|' '/a|b/ || /c/ { n++ } END { print n / 2 }' f",
      "awk '{ printf(\"%d\\n\", $1 > 5) }' f", "shopt -s nullglob"
    ]
    for (const command of notOpaque) {
      assert.isUndefined((await analyze(command)).opaque, command)
    }
  })

  it("suggests one narrow rule per sub-command needing approval, at most five", async () => {
    await load
    assert.deepStrictEqual(CommandSemantics.suggestRules("npm run test -- --watch"), ["Bash(npm run test:*)"])
    assert.deepStrictEqual(CommandSemantics.suggestRules("git status && git commit -m x && git push"), [
      "Bash(git commit:*)",
      "Bash(git push)"
    ])
    assert.deepStrictEqual(CommandSemantics.suggestRules("sudo -u root apt-get install -y jq"), [
      "Bash(sudo -u root apt-get install:*)",
      "Bash(apt-get install:*)"
    ])
    assert.deepStrictEqual(CommandSemantics.suggestRules("ls -la"), [])
    assert.deepStrictEqual(CommandSemantics.suggestRules("bash -c 'npm test'"), [])
    assert.deepStrictEqual(CommandSemantics.suggestRules("a 1; b 1; c 1; d 1; e 1; f 1"), [
      "Bash(a:*)", "Bash(b:*)", "Bash(c:*)", "Bash(d:*)", "Bash(e:*)"
    ])
  })

  it("never throws, whatever the input", async () => {
    await load
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (command) => {
      const analysis = CommandSemantics.analyze(command)
      return Array.isArray(analysis.commands) && (analysis.readOnly ? analysis.opaque === undefined : true)
    }), { numRuns: 500 })
  })
})
