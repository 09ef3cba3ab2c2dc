package trust

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Undermined says why a shell command line's exit status cannot be taken
// for its commands' own, whatever they are ("" when nothing in it can
// change that): the status StatusCommands vouches for is the status of
// the programs named, and a line can make a name run something else, or
// replace the status on the way out:
//
//   - a trap (`trap 'exit 0' EXIT` makes any failure a success);
//   - a shell function or an alias (`go() { :; }; go test ./...`), or
//     what else changes what a name runs or how the line is read: hash,
//     enable, source or `.` (but a venv's bin/activate the parent
//     pinned: UnderminedBy), eval (but of a known environment manager's
//     setup: eval "$(pyenv init -)"), shopt, `set -n` (noexec), and a
//     variable such as PATH (but one appended to: $PATH:/usr/local/go/bin),
//     BASH_ENV or BASH_FUNC_* set anywhere;
//   - a variable that changes what a test run does (GOFLAGS=-exec=true,
//     GOFLAGS=-count=0, GOROOT, GOTOOLCHAIN, PYTEST_ADDOPTS, LD_PRELOAD,
//     NODE_OPTIONS with --require, a cargo runner), set before a command,
//     exported, or given to env;
//   - a program whose name the line computes ($(echo trap), `echo trap`,
//     ${x}, a glob): it can be trap, a function, anything;
//   - make handed a variable by an assignment before it, env or export
//     (GO=true make test: a Makefile's `GO ?= go` takes it), or MAKEFLAGS
//     and their like set anywhere.
//
// A line that does not parse is undermined: nothing can be said of it.
// Undermined exempts no sourced script.
func Undermined(command string) string { return UnderminedBy(command, nil) }

// UnderminedBy is Undermined with `source X/bin/activate` (a Python
// virtual environment's, written out) exempt when trusted(X/bin/activate)
// says that script is not the child's doing: the parent pinned it when it
// spawned the child and it is unchanged (spawn: venvPins). nil trusts none.
func UnderminedBy(command string, trusted func(path string) bool) string {
	f, why := parseWhy(command)
	if why != "" {
		return why
	}
	if movesDir(f) {
		trusted = nil // the path the line sources is not the one it names
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if why != "" {
			return false
		}
		switch x := n.(type) {
		case *syntax.FuncDecl:
			why = fmt.Sprintf("it defines a shell function (%s), which runs in place of any program of that name", x.Name.Value)
		case *syntax.DeclClause:
			for _, a := range x.Args {
				if a.Name != nil && statusVariable(a.Name.Value, assignValue(a)) {
					why = fmt.Sprintf("it sets %s (%s), which changes what runs", a.Name.Value, x.Variant.Value)
				}
			}
		case *syntax.CallExpr:
			why = undermines(x, trusted)
		}
		return why == ""
	})
	if why == "" {
		why = setByOtherMeans(f)
	}
	if why == "" {
		why = makeVariables(f)
	}
	if why == "" {
		why = goConfigMoved(f)
	}
	return why
}

// undermines is why one simple command undermines its line's status ("").
func undermines(c *syntax.CallExpr, trusted func(string) bool) string {
	for _, a := range c.Assigns {
		if a.Name != nil && statusVariable(a.Name.Value, assignValue(a)) {
			return fmt.Sprintf("it sets %s, which changes what runs", a.Name.Value)
		}
	}
	var words []string
	for _, w := range c.Args {
		words = append(words, wordText(w, ""))
	}
	if len(words) == 0 {
		return ""
	}
	// A wrapper's own assignments (env GOFLAGS=-exec=true go test), env's
	// too where they are no names the shell's grammar allows
	// (env 'BASH_FUNC_go%%=() { :; }' bash -c …).
	i := programIndex(words)
	upto := i
	if filepath.Base(words[0]) == "env" {
		upto = len(words)
	}
	for _, w := range words[:upto] {
		if k, v, ok := strings.Cut(w, "="); ok && statusVariable(k, v) {
			return fmt.Sprintf("it sets %s, which changes what runs", k)
		}
	}
	if i >= len(words) {
		return ""
	}
	if computed(c.Args[i]) {
		return fmt.Sprintf("it runs a program whose name the line computes (%s): it can be trap, a function or anything", words[i])
	}
	switch prog := filepath.Base(words[i]); prog {
	case "trap":
		return "it sets a trap, which can replace the line's exit status"
	case "source", ".":
		if activatesVenv(words[i+1:]) && trusted != nil && trusted(words[i+1]) {
			return ""
		}
		return fmt.Sprintf("it runs %s, which can change what a name runs or how the line is read", prog)
	case "eval":
		if evalsInit(c.Args[i+1:]) {
			return ""
		}
		return fmt.Sprintf("it runs %s, which can change what a name runs or how the line is read", prog)
	case "alias", "hash", "enable", "shopt":
		return fmt.Sprintf("it runs %s, which can change what a name runs or how the line is read", prog)
	case "set":
		if noexec(words[i+1:]) {
			return "it sets noexec (set -n), under which nothing after it runs"
		}
	}
	return ""
}

// movesDir reports a line that runs cd, pushd or popd anywhere (a loop
// can run one before a source written ahead of it): `cd sub && source
// .venv/bin/activate` sources sub/.venv, not the pinned .venv (review
// #2), so no venv is exempt in it.
func movesDir(f *syntax.File) bool {
	moves := false
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || moves {
			return !moves
		}
		var words []string
		for _, w := range c.Args {
			words = append(words, wordText(w, ""))
		}
		i := programIndex(words)
		for i+1 < len(words) && (words[i] == "builtin" || words[i] == "command") {
			i++
		}
		if i < len(words) {
			switch filepath.Base(words[i]) {
			case "cd", "pushd", "popd":
				moves = true
			}
		}
		return !moves
	})
	return moves
}

// activatesVenv reports a source of a Python virtual environment's
// activate script, written out (`. .venv/bin/activate`): it sets PATH to
// the venv's bin ahead of the rest, as an honest run needs.
func activatesVenv(args []string) bool {
	if len(args) != 1 || strings.ContainsAny(args[0], "$`") {
		return false
	}
	return args[0] == "bin/activate" || strings.HasSuffix(args[0], "/bin/activate")
}

// envInits are the version and environment managers whose shell setup
// `eval "$(...)"` honest lines run; their output is the installed tool's,
// not the repository's.
var envInits = [][]string{
	{"pyenv", "init", "-"}, {"pyenv", "init", "--path"}, {"pyenv", "virtualenv-init", "-"},
	{"rbenv", "init", "-"}, {"nodenv", "init", "-"}, {"goenv", "init", "-"},
	{"direnv", "export", "bash"}, {"conda", "shell.bash", "hook"},
}

// evalsInit reports eval of one double-quoted command substitution that
// runs a known environment manager's setup (eval "$(pyenv init -)").
func evalsInit(args []*syntax.Word) bool {
	if len(args) != 1 || len(args[0].Parts) != 1 {
		return false
	}
	dq, ok := args[0].Parts[0].(*syntax.DblQuoted)
	if !ok || len(dq.Parts) != 1 {
		return false
	}
	cs, ok := dq.Parts[0].(*syntax.CmdSubst)
	if !ok || len(cs.Stmts) != 1 {
		return false
	}
	call, ok := cs.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) != 0 {
		return false
	}
	var words []string
	for _, w := range call.Args {
		words = append(words, wordText(w, ""))
	}
	for _, want := range envInits {
		if slices.Equal(words, want) {
			return true
		}
	}
	return false
}

// noexec reports whether set's arguments turn noexec on (-n, a group of
// letters holding n, -o noexec).
func noexec(args []string) bool {
	for j, a := range args {
		switch {
		case a == "--" || !strings.HasPrefix(a, "-"):
			return false
		case a == "-o" && j+1 < len(args) && args[j+1] == "noexec", a == "-onoexec":
			return true
		case !strings.HasPrefix(a, "-o") && strings.ContainsRune(a[1:], 'n'):
			return true
		}
	}
	return false
}

// assignValue is an assignment's value as written ("" none).
func assignValue(a *syntax.Assign) string {
	if a.Value == nil {
		return ""
	}
	return wordText(a.Value, "")
}

// statusVariable reports a variable that changes which program a name
// runs, what a shell reads first, or what a test run does, set to value.
// GOFLAGS counts only with a flag that runs no test or runs it through
// another program (-mod=mod, -count=1 and their like are common and
// change nothing of that), or with a value the line computes.
func statusVariable(name, value string) bool {
	if name == "GOFLAGS" {
		if strings.ContainsAny(value, "$`") {
			return true
		}
		for _, f := range strings.Fields(value) {
			f, v, _ := strings.Cut(strings.TrimLeft(f, "-"), "=")
			switch f {
			case "exec", "toolexec", "overlay", "n", "c", "list", "run", "skip", "args", "modfile":
				return true
			case "count":
				if v == "0" {
					return true
				}
			}
		}
		return false
	}
	switch name {
	case "PATH":
		return !appendsPath(value)
	case "GOWORK": // chooses the modules go builds, as a changed go.work would
		return value != "off"
	case "NODE_OPTIONS":
		return !harmlessNodeOptions(value)
	case "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS",
		"GOROOT", "GOTOOLCHAIN", "GOENV", "GOEXPERIMENT",
		"PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTHONSTARTUP",
		"RUSTC_WRAPPER", "RUSTC", "CARGO_BUILD_RUSTC_WRAPPER", "LD_PRELOAD", "LD_AUDIT":
		return true
	}
	if strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "npm_config_") || strings.HasPrefix(name, "NPM_CONFIG_") {
		return true
	}
	return strings.HasPrefix(name, "CARGO_TARGET_") && strings.HasSuffix(name, "_RUNNER")
}

// appendsPath reports a PATH that keeps the one before it first and adds
// directories after it ($PATH:/usr/local/go/bin): no name it had runs
// anything else. One that puts a directory first, or replaces it, can.
func appendsPath(value string) bool {
	for _, p := range []string{"$PATH:", "${PATH}:"} {
		if rest, ok := strings.CutPrefix(value, p); ok {
			return !strings.ContainsAny(rest, "$`")
		}
	}
	return false
}

// harmlessNodeOptions reports NODE_OPTIONS that only turn on language
// features or tune the runtime (jest's --experimental-vm-modules); any
// other option (--require, --import, --loader) can run other code first.
func harmlessNodeOptions(value string) bool {
	if strings.ContainsAny(value, "$`") {
		return false
	}
	for _, f := range strings.Fields(value) {
		opt, _, _ := strings.Cut(f, "=")
		switch {
		case strings.HasPrefix(opt, "--experimental-") && !strings.Contains(opt, "loader"),
			opt == "--max-old-space-size", opt == "--no-warnings", opt == "--no-deprecation",
			opt == "--trace-warnings", opt == "--unhandled-rejections", opt == "--openssl-legacy-provider",
			opt == "--enable-source-maps", opt == "--stack-trace-limit":
		default:
			return false
		}
	}
	return true
}

// computed reports a program word the shell computes: an expansion,
// a command substitution, arithmetic or a glob in it (quotes alone,
// "tr"ap, are read through by wordText).
func computed(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(x.Value, "*?[") {
				return true
			}
		case *syntax.SglQuoted:
		case *syntax.DblQuoted:
			for _, q := range x.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return true
				}
			}
		default:
			return true
		}
	}
	return false
}

// makeFlagVars are the variables make reads as its options or as more
// makefiles.
var makeFlagVars = []string{"MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEFILES"}

// verbosityVariable reports V or VERBOSE set to a number (V=1 make
// test): it only asks for more output (guard's make command-line check
// takes the same).
func verbosityVariable(name, value string) bool {
	if name != "V" && name != "VERBOSE" || value == "" {
		return false
	}
	return strings.Trim(value, "0123456789") == ""
}

// makeVariables says why a line that runs make hands it variables its
// words do not show ("" none): an assignment before make or given to env,
// an export of one (but PATH appended to), or MAKEFLAGS and its like set
// anywhere. make takes the environment's variables for the Makefile's
// `?=` defaults and `$(X)` it never sets itself.
func makeVariables(f *syntax.File) string {
	runsMake, why := false, ""
	note := func(name, value string) {
		if why == "" && !(name == "PATH" && appendsPath(value)) && !verbosityVariable(name, value) {
			why = fmt.Sprintf("it hands make the variable %s, which the Makefile's recipes may run (GO ?= go takes it)", name)
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.DeclClause:
			if x.Variant.Value == "export" || x.Variant.Value == "declare" || x.Variant.Value == "typeset" {
				for _, a := range x.Args {
					if a.Name != nil {
						note(a.Name.Value, assignValue(a))
					}
				}
			}
		case *syntax.Assign:
			if x.Name != nil && slices.Contains(makeFlagVars, x.Name.Value) {
				note(x.Name.Value, "")
			}
		case *syntax.CallExpr:
			var words []string
			for _, w := range x.Args {
				words = append(words, wordText(w, ""))
			}
			i := programIndex(words)
			if i >= len(words) || filepath.Base(words[i]) != "make" {
				return true
			}
			runsMake = true
			for _, a := range x.Assigns {
				if a.Name != nil {
					note(a.Name.Value, assignValue(a))
				}
			}
			for _, w := range words[:i] {
				if k, v, ok := strings.Cut(w, "="); ok {
					note(k, v)
				}
			}
		}
		return true
	})
	if !runsMake {
		return ""
	}
	return why
}
