package tool

import (
	"path/filepath"
	"strings"
	"sync"
)

// What a suggested rule would let run (review42 P2-A). A program that runs
// code named by an argument or an option (java Foo, ssh HOST CMD, npx PKG,
// go run ./x, make -f FILE, awk -f FILE, zip -TT CMD, gdb -ex, uv run
// python ...) gets no rule to keep, as an interpreter does: a rule for it
// would run whatever that code is, in every project the rule reaches.

// wordsScope says where a rule for the command words (program first) may
// go; prefix is set for a prefix rule (words:*), unset for an exact line.
func wordsScope(words []string, prefix bool, dir string) ruleScope {
	if len(words) == 0 {
		return scopeNone
	}
	prog := interpName(words[0])
	if inner, ok := runnerInner(words); ok {
		// (uv run X, poetry run X, bundle exec X: X is the command)
		if len(inner) == 0 {
			return scopeNone
		}
		return wordsScope(inner, prefix, dir)
	}
	switch {
	case wrappers()[prog], namesCode(words):
		return scopeNone
	case (len(words) == 1 || !prefix) && (isInterpreter(prog) || movers()[prog]):
		// (an exact line too: python3 -c '<any code>' in every project)
		return scopeNone
	case repoPath(words[0], dir, false):
		return scopeLocal
	case !filepath.IsAbs(words[0]) && !staysInside(words[0]):
		// ../../tmp/x.sh: a file beside the repository, another one in
		// every other project.
		return scopeNone
	case isInterpreter(prog):
		// Its script: one of the repository's (a relative name is read
		// where it runs: node script, python3 manage.py), else one any
		// project could put there (/tmp/x.py, ~/x.py, $X). A module (-m
		// runpy, pdb, pip, pytest) is one the environment or the project
		// chooses, whatever its name.
		if words[1] != "-m" && scriptPath(words[1], dir) {
			return scopeLocal
		}
		return scopeNone
	case runsRepoCode(words):
		// A build or test runner runs the repository's own code (its
		// Makefile, package.json scripts, build.rs, conftest.py): another
		// repository's is another program, as ./build.sh is.
		return scopeLocal
	}
	return scopeUser
}

// runsRepoCode reports whether the words (program first) name a build or
// test runner, or a subcommand of one, that runs the repository's code.
func runsRepoCode(words []string) bool {
	prog := interpName(words[0])
	if buildRunners()[prog] || prog == "yarn" && len(words) == 1 {
		return true
	}
	if len(words) < 2 {
		return false
	}
	switch prog {
	case "npm", "pnpm", "yarn", "bun":
		return npmScripts()[words[1]]
	}
	return buildSubcommands()[prog+" "+words[1]]
}

// buildRunners run the repository's build or tests whatever follows.
var buildRunners = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range []string{"make", "gmake", "bmake", "pytest", "py.test", "tox", "nox", "cmake", "ctest", "ninja", "meson", "scons"} {
		m[p] = true
	}
	return m
})

// buildSubcommands are the subcommands that build or test the repository
// (build.rs, go generate directives, setup.py) or install a package, whose
// scripts run at install.
var buildSubcommands = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range []string{"cargo build", "cargo b", "cargo test", "cargo t", "cargo check", "cargo c", "cargo bench", "cargo clippy",
		"cargo doc", "cargo d", "cargo install", "cargo fix", "cargo publish", "cargo package", "go test", "go generate",
		"pip install", "pip wheel", "pip download", "uv pip", "uv sync", "uv build", "uv add", "uv lock",
		"poetry install", "poetry build", "poetry add", "bazel build", "bazel test", "bazelisk build", "bazelisk test"} {
		m[p] = true
	}
	return m
})

// scriptPath reports whether an interpreter's script operand w names a
// file of the repository: a relative path, or an absolute one inside dir.
func scriptPath(w, dir string) bool {
	if strings.HasPrefix(w, "~") || strings.ContainsAny(w, "$`") {
		return false
	}
	return repoPath(w, dir, true) || !strings.HasPrefix(w, "/") && !strings.HasPrefix(w, "-") && staysInside(w)
}

// lineRunsCode reports whether an exact rule's line runs code that its
// words do not show: one of its commands gets no rule of its own
// (wordsScope), or has an option or word that runs a program or reads
// code from a file (awk -f FILE, tar --to-command=sh, sed's e command,
// git -c core.pager=..., make -f FILE, zip -TT CMD). An option that only
// writes a file (sed -i, sort -o) is what the line says.
func lineRunsCode(line, dir string) bool {
	sl := parseShell(line)
	if sl.opaque || len(sl.cmds) == 0 {
		return true
	}
	for _, cmd := range sl.cmds {
		if len(cmd.args) == 0 {
			continue
		}
		if wordsScope(texts(cmd.args), false, dir) == scopeNone {
			return true
		}
		if a := analyse(cmd.args, dir); a.inner != nil || runsCode(a.risks) {
			return true
		}
	}
	return false
}

// prefixRunsCode reports whether a prefix rule's own words already run
// code (make SHELL=/tmp/evil:*, the one word a suggested prefix keeps
// that is neither a subcommand nor an option): the rule covers what it
// names, so it would allow that in every project it reaches.
func prefixRunsCode(spec string) bool {
	sl := parseShell(spec)
	if sl.opaque || len(sl.cmds) != 1 {
		return true
	}
	args := sl.cmds[0].args
	return len(args) > 0 && (programName(args[0].text) == "make" || programName(args[0].text) == "gmake") && len(makeVarRisks(args)) > 0
}

// runsCode reports whether one of the risks runs a program or reads code
// (not only writes a file the line names, nor an operand of cp or rm).
func runsCode(risks []risk) bool {
	for _, rk := range risks {
		if !rk.guardOnly && !writesOnly(rk.why) {
			return true
		}
	}
	return false
}

// writesOnly reports whether a risk's effect is to write, delete, read or
// send a file the line names, not to run a program or read code.
func writesOnly(why string) bool {
	for _, w := range []string{effWrite, effWriteDir, "writes ", "edits files in place", "deletes files", "sends a file",
		"creates or extracts files", "extracts files", "compares (and so reads) files"} {
		if strings.HasPrefix(why, w) {
			return true
		}
	}
	return false
}

// namesCode reports whether a rule for the words (program first, then
// the subcommand or arguments the rule keeps) runs code an argument or
// option names, whatever follows: a program that always does (java,
// ssh, npx, gdb), one of a tool's subcommands that does (go run, cargo
// run, npm exec, deno run), or a tool whose subcommands run programs
// unchecked, named alone (uv, cargo, docker: uv run, cargo run, docker
// run -v /:/host).
func namesCode(words []string) bool {
	prog := interpName(words[0])
	if codeRunners()[prog] {
		return true
	}
	subs, ok := codeSubcommands()[prog]
	if !ok {
		return false
	}
	if len(words) == 1 {
		return subs[""]
	}
	sub := words[1]
	if prog == "bun" && (strings.ContainsAny(sub, "./") || sub == "run" && len(words) > 2 && strings.ContainsAny(words[2], "./")) {
		return true // bun x.ts, bun run x.ts: a script, as node x.ts
	}
	return subs[sub]
}

// runnerInner is the command a runner subcommand runs (uv run pytest:
// pytest), and whether words are one; inner is empty when the rule names
// none (uv run:*, which runs any program).
func runnerInner(words []string) (inner []string, ok bool) {
	if len(words) < 2 || !runners()[interpName(words[0])+" "+words[1]] {
		return nil, false
	}
	return words[2:], true
}

// codeRunners run code an argument or option names, whatever it is: a
// class or jar, a remote command, a package fetched by name, debugger or
// editor commands, SQL clients' shell escapes, a command to time or trace.
var codeRunners = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range []string{"java", "javaw", "jshell", "jrunscript", "jjs", "ssh", "mosh", "gdb", "gdbserver", "lldb", "rr",
		"vim", "vi", "nvim", "ex", "view", "emacs", "emacsclient", "sqlite", "mysql", "mariadb", "psql",
		"expect", "screen", "tmux", "at", "batch", "crontab", "npx", "pnpx", "bunx", "uvx", "pipx",
		"irb", "ipython", "ghci", "iex", "erl", "valgrind", "perf", "hyperfine", "taskset", "chrt", "fakeroot",
		"busybox", "gcc", "g++", "cc", "c++", "clang", "clang++", "tcc", "ld.so", "ld-linux.so", "ld-linux-x86-64.so", "ld-linux-aarch64.so",
		"firejail", "bwrap", "xvfb-run", "dbus-run-session", "proxychains", "torsocks", "faketime", "entr",
		"rustc", "rake", "just", "nix-shell", "rlwrap", "sg", "runuser", "pkexec", "ansible", "ansible-playbook", "terraform", "tofu"} {
		m[p] = true
	}
	return m
})

// codeSubcommands are, per tool, the subcommands that run code an
// argument names ("" for the tool named alone: its subcommands run
// programs and no option check guards them).
var codeSubcommands = sync.OnceValue(func() map[string]map[string]bool {
	set := func(s ...string) map[string]bool {
		m := map[string]bool{}
		for _, x := range s {
			m[x] = true
		}
		return m
	}
	return map[string]map[string]bool{
		"go":       set("run", "tool"),
		"git":      set("difftool", "mergetool"),
		"bazel":    set("run"),
		"bazelisk": set("", "run"),
		"cargo":    set("", "run", "script"),
		"npm":      set("exec", "x"),
		"pnpm":     set("dlx"),
		"yarn":     set("dlx"),
		"bun":      set("", "x", "exec"),
		"deno":     set("", "run", "eval", "repl", "x", "serve", "install", "jupyter"),
		"uv":       set("", "tool"),
		"poetry":   set(""),
		"pipenv":   set(""),
		"pdm":      set(""),
		"hatch":    set(""),
		"rye":      set(""),
		"conda":    set(""),
		"pixi":     set(""),
		"bundle":   set(""),
		"docker":   set("", "exec", "run", "compose", "container", "create"),
		"podman":   set("", "exec", "run", "compose", "container", "create"),
		"kubectl":  set("", "exec", "debug", "run", "create", "apply"),
		"gh":       set("", "extension", "ext"),
		"dotnet":   set("", "run", "exec", "script", "tool"),
		"mvn":      set(""),
		"gradle":   set(""),
		"sbt":      set(""),
		"nix":      set("", "run", "shell", "develop"),
		"stack":    set("", "exec", "runghc", "runhaskell", "ghci"),
		"cabal":    set("", "exec", "run", "repl"),
		"mix":      set("", "run"),
		"rustup":   set("run"),
	}
})

// runners are the subcommands that run the command after them in the
// project's environment: a rule is judged by that command.
var runners = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, r := range []string{"uv run", "poetry run", "pipenv run", "pdm run", "hatch run", "rye run", "conda run", "pixi run",
		"bundle exec", "pnpm exec", "yarn exec"} {
		m[r] = true
	}
	return m
})
