package trust

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A trusted hook or MCP server runs programs, and the ones in the project
// are files a subagent could rewrite: trust that covered only the settings
// line `./scripts/guard.sh` would run whatever a child left there. So the
// files a command names are part of what trust covers (the grant's key, the
// in-place guard's snapshot, what an isolated child's patch may not carry)
// and are checked again before a hook runs (Pin).

// projectVars are the variables a hook's command may use for the project
// directory (brood sets both).
var projectVars = []string{"CLAUDE_PROJECT_DIR", "BROOD_PROJECT_DIR"}

// ShellCommands splits a shell command line (a hook's `sh -c` command, or
// a script's text) into its simple commands' words with bash's own
// grammar (mvdan.cc/sh, the parser the tool guard uses): quotes are
// removed, $CLAUDE_PROJECT_DIR and $BROOD_PROJECT_DIR are replaced with
// root, a command in a substitution is a command of its own, a file read
// as input (`python3 < tool.py`) is a word of its command (it is what the
// interpreter runs), and redirection targets that are written (`> log`,
// `2> err`) are left out — they are the command's output, not what it
// runs. A text that stops parsing yields the commands before the error:
// those a shell runs before it gives up.
func ShellCommands(command, root string) [][]string {
	var cmds [][]string
	p := syntax.NewParser(syntax.Variant(syntax.LangBash))
	_ = p.Stmts(strings.NewReader(command), func(st *syntax.Stmt) bool {
		syntax.Walk(st, func(n syntax.Node) bool {
			st, ok := n.(*syntax.Stmt)
			if !ok {
				return true
			}
			call, ok := st.Cmd.(*syntax.CallExpr)
			if !ok {
				return true
			}
			var words []string
			for _, w := range call.Args {
				words = append(words, wordText(w, root))
			}
			for _, r := range st.Redirs {
				if r.Op == syntax.RdrIn && r.Word != nil {
					words = append(words, wordText(r.Word, root))
				}
			}
			if len(words) > 0 {
				cmds = append(cmds, words)
			}
			return true
		})
		return true
	})
	return cmds
}

// wordText is a word as the shell would pass it, as far as a static look
// can tell: literal parts unquoted, the project variables expanded, any
// other expansion kept as written.
func wordText(w *syntax.Word, root string) string {
	var b strings.Builder
	var parts func(ps []syntax.WordPart, quoted bool)
	parts = func(ps []syntax.WordPart, quoted bool) {
		for _, part := range ps {
			switch x := part.(type) {
			case *syntax.Lit:
				b.WriteString(unescape(x.Value, quoted))
			case *syntax.SglQuoted:
				b.WriteString(x.Value)
			case *syntax.DblQuoted:
				parts(x.Parts, true)
			case *syntax.ParamExp:
				if x.Param != nil && slices.Contains(projectVars, x.Param.Value) && x.Exp == nil && x.Repl == nil && x.Index == nil && x.Slice == nil && !x.Length && !x.Excl {
					b.WriteString(root)
					continue
				}
				printPart(&b, x)
			default:
				printPart(&b, part)
			}
		}
	}
	parts(w.Parts, false)
	return b.String()
}

// unescape drops the backslashes the shell drops: before any character
// outside quotes, before $ ` " \ and a newline inside double quotes.
func unescape(s string, quoted bool) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (!quoted || strings.IndexByte("$`\"\\\n", s[i+1]) >= 0) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func printPart(b *strings.Builder, n syntax.Node) {
	_ = syntax.NewPrinter().Print(b, n)
}

func expandProject(w, root string) string {
	for _, v := range projectVars {
		w = strings.ReplaceAll(w, "${"+v+"}", root)
		w = strings.ReplaceAll(w, "$"+v, root)
	}
	return w
}

// interpreters run the file given as their first operand; inline are the
// options that give them code instead of a file.
var (
	interpreters = []string{"sh", "bash", "zsh", "dash", "ksh", "fish", "python", "node", "nodejs", "deno", "bun", "tsx", "ts-node",
		"ruby", "perl", "php", "lua", "Rscript", "pwsh", "source", "."}
	inline = []string{"-c", "-e", "-p", "-m", "-r", "--eval", "--print", "-Command"}
)

// wrapperOpts are the programs that run the command given as their
// arguments — the one table of them, the tool guard's (tool) and
// Programs' — each with which of its one-letter options take a value of
// their own (so that value is not the program).
var wrapperOpts = map[string]string{
	"command": "", "builtin": "", "exec": "a", "env": "uCS", "nohup": "", "time": "fo",
	"xargs": "adEeIiLlnPs", "nice": "n", "timeout": "sk", "stdbuf": "ioe", "sudo": "ugCDhprTU", "doas": "uC", "unbuffer": "",
	"setsid": "", "ionice": "cnpPu",
}

// WrapperOptions says whether the program named name (a base name) runs
// the command given as its arguments, and which of its one-letter options
// take a value.
func WrapperOptions(name string) (valued string, ok bool) {
	valued, ok = wrapperOpts[name]
	return valued, ok
}

// SkipWrapper is the index of the word after the wrapper at words[i]: past
// its options (and the values of those that take one), env's VAR=x, and
// timeout's or nice's number. words[i] must be a wrapper (WrapperOptions).
func SkipWrapper(words []string, i int) int {
	opt := wrapperOpts[filepath.Base(words[i])]
	for i++; i < len(words); {
		a := words[i]
		switch {
		case strings.HasPrefix(a, "-") && len(a) == 2 && strings.ContainsRune(opt, rune(a[1])) && i+1 < len(words):
			i += 2
		case strings.HasPrefix(a, "-") || isAssignment(a) || IsNumber(a):
			i++
		default:
			return i
		}
	}
	return i
}

// Programs are the words of one simple command that stand where a program
// is named: the command word (after VAR=value assignments and wrappers such
// as env, exec, nice, timeout 10, xargs) and, for an interpreter (sh, bash,
// python3, node, ruby, …), its script: the first operand, unless the code
// is given inline (-c, -e).
func Programs(words []string) []string {
	i := programIndex(words)
	if i >= len(words) {
		return nil
	}
	out := []string{words[i]}
	name := strings.TrimRight(filepath.Base(words[i]), "0123456789.")
	if name == "" {
		name = filepath.Base(words[i]) // "."
	}
	if !slices.Contains(interpreters, name) {
		return out
	}
	for _, w := range words[i+1:] {
		switch {
		case slices.Contains(inline, w):
			return out
		case strings.HasPrefix(w, "-"):
			continue
		case (name == "deno" || name == "bun") && w == "run":
			continue
		}
		return append(out, w)
	}
	return out
}

func isAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	return ok && k != "" && strings.Trim(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == "" && (k[0] < '0' || k[0] > '9')
}

// IsNumber reports a number with an optional unit (5, 0.5, 10s, 2m): a
// duration or a niceness, never a word of letters ("sh" is a program).
func IsNumber(w string) bool {
	w = strings.TrimRight(w, "smhd")
	return w != "" && strings.Trim(w, "0123456789.") == ""
}

// NamedFiles are the files under root that one command runs, resolved
// against dir (where it runs): the words in a program's place (programs:
// Programs) that name a regular file, and any other word that names an
// executable file (`xargs ./fmt.sh`, `find . -exec ./x.sh`, `--with=./x`
// looked at after the `=`); a link counts with the file it leads to when
// that is under root too. absent are program words written as a path
// (`./scripts/fmt.sh`) under root that do not exist yet: a file created
// there later would run. Data a command reads or writes by name is not
// counted (`tee -a hook.log`, a JSON it is given). Words with other
// variables, globs or `~` are not resolved. Both lists hold absolute
// paths, sorted, without duplicates.
func NamedFiles(root, dir string, programs, words []string) (present, absent []string) {
	if root == "" {
		return nil, nil
	}
	if dir == "" {
		dir = root
	}
	for _, w := range append(slices.Clone(programs), words...) {
		prog := slices.Contains(programs, w)
		cands := []string{w}
		if i := strings.IndexByte(w, '='); i > 0 {
			cands = append(cands, w[i+1:])
		}
		for _, c := range cands {
			if c == "" || strings.ContainsAny(c, "$*?[~") {
				continue
			}
			p := c
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			p = filepath.Clean(p)
			if !under(root, p) {
				continue
			}
			info, err := os.Stat(p)
			switch {
			case err == nil && info.Mode().IsRegular() && (prog || info.Mode().Perm()&0o111 != 0):
				present = append(present, p)
				if real, err := filepath.EvalSymlinks(p); err == nil && real != p && under(Key(root), real) {
					present = append(present, filepath.Join(root, strings.TrimPrefix(real, Key(root))))
				}
			case errors.Is(err, fs.ErrNotExist) && prog && strings.ContainsRune(c, '/'):
				absent = append(absent, p)
			}
		}
	}
	slices.Sort(present)
	slices.Sort(absent)
	return slices.Compact(present), slices.Compact(absent)
}

// under reports whether p is root or beneath it (lexically).
func under(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel)
}

// ProgramFiles are the NamedFiles of every simple command of a hook's
// shell command run in dir, with what the shell scripts among them source
// or run (withSourced).
func ProgramFiles(root, dir, command string) (present, absent []string) {
	for _, ws := range ShellCommands(command, root) {
		p, a := NamedFiles(root, dir, Programs(ws), ws)
		present, absent = append(present, p...), append(absent, a...)
	}
	slices.Sort(absent)
	return withSourced(root, present), slices.Compact(absent)
}

// ArgvFiles are the NamedFiles of a command given as its argv (an MCP
// server's command and args: no shell), with what the shell scripts among
// them source or run (withSourced).
func ArgvFiles(root, dir string, argv []string) []string {
	present, _ := NamedFiles(root, dir, Programs(argv), argv)
	return withSourced(root, present)
}

// Rels are paths under root made project-relative and slash-separated
// (those not under root are dropped).
func Rels(root string, paths []string) []string {
	var out []string
	for _, p := range paths {
		if rel, err := filepath.Rel(root, p); err == nil && filepath.IsLocal(rel) {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

// Pin is one file a hook names, as it was when the hook was loaded: the
// SHA-256 of its content, or absent ("").
type Pin struct {
	Path string
	Sum  string
}

// PinFiles pins present (read now) and absent files. A present file that
// cannot be read is pinned as unreadable, which never matches.
func PinFiles(present, absent []string) []Pin {
	var out []Pin
	for _, p := range present {
		data, err := os.ReadFile(p)
		s := "unreadable"
		if err == nil {
			s = sum(data)
		}
		out = append(out, Pin{Path: p, Sum: s})
	}
	for _, p := range absent {
		out = append(out, Pin{Path: p})
	}
	return out
}

// TrustsPin reports whether the grant trusts the pinned file with the
// content it was pinned with (not as it is now: a file changed between the
// pin and this check is the pin's). A nil grant trusts nothing; "all"
// trusts every file under root.
func (g *Grant) TrustsPin(root string, pin Pin) bool {
	if g == nil || root == "" || !under(root, pin.Path) {
		return false
	}
	if g.All {
		return true
	}
	rel, err := filepath.Rel(root, pin.Path)
	if err != nil {
		return false
	}
	want, ok := g.Files[filepath.ToSlash(rel)]
	return ok && pin.Sum != "" && want == pin.Sum
}

// CheckPins reports the first pinned file that is not as it was: changed,
// removed, or created where there was none.
func CheckPins(pins []Pin) error {
	for _, pin := range pins {
		data, err := os.ReadFile(pin.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && pin.Sum == "":
		case err == nil && sum(data) == pin.Sum:
		case pin.Sum == "":
			return fmt.Errorf("%s was created since the hooks were loaded", pin.Path)
		case err != nil:
			return fmt.Errorf("%s cannot be read as it was when the hooks were loaded: %v", pin.Path, err)
		default:
			return fmt.Errorf("%s changed since the hooks were loaded", pin.Path)
		}
	}
	return nil
}

// Held are the project files the grant covers beyond brood's and Claude
// Code's configuration (IsConfigPath): the programs trusted hooks and MCP
// servers run. A subagent's change to one is held back like a change to
// configuration. Sorted; nil for a nil grant.
func (g *Grant) Held() []string {
	if g == nil {
		return nil
	}
	var out []string
	for rel := range g.Files {
		if !IsConfigPath(rel) {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}

// SnapshotFiles keeps the given project-relative files under root as they
// are now (content, mode, link targets), for a change a subagent made in
// place to be found and put back (Changes, Restore), as SnapshotConfig does
// for the configuration. Files that do not exist are recorded as absent.
func SnapshotFiles(root string, rels []string) (*ConfigState, error) {
	rels = slices.Clone(rels)
	return snapshot(&ConfigState{root: root, tops: rels, keep: func(rel string) bool { return slices.Contains(rels, rel) }})
}

// programIndex is the index of the word naming a simple command's program:
// past VAR=value assignments and wrappers (env, timeout 10, nice, …).
func programIndex(words []string) int {
	i := 0
	for i < len(words) && isAssignment(words[i]) {
		i++
	}
	for i < len(words) {
		if _, ok := WrapperOptions(filepath.Base(words[i])); !ok {
			break
		}
		i = SkipWrapper(words, i)
	}
	return i
}
