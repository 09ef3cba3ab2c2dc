package tool

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"

	"github.com/broodhq/brood/internal/trust"
)

// shellLine is a Bash command line as permission rules see it.
type shellLine struct {
	// parts are the simple commands of the line, as written: the ones joined
	// by && || ; | & or newlines, and those inside $( ), ` `, <( ), >( )
	// and $(( )). An outer command keeps its substitution text, so
	// "echo $(rm x)" yields "echo $(rm x)" and "rm x", and each must be
	// allowed.
	parts []string
	// names are the same commands normalised for deny and ask rules: leading
	// VAR=value assignments and wrappers (command, exec, env, nohup, time,
	// xargs, ...) dropped, quotes and backslashes removed, the program's
	// path reduced to its name; "sh -c '...'" is looked into. A deny rule
	// cannot be spelt around as "/bin/rm", "\rm", "r''m" or "FOO=1 rm".
	names []string
	// unsafe, when set, says why no prefix allow rule may approve the line:
	// it does not parse, it writes a file through a redirection (an allowed
	// "git status > ~/.bashrc" would write anywhere), or it uses a shell
	// feature that can run code a rule never sees (arithmetic on variables,
	// [[ ]], declarations, indirect expansions).
	unsafe string
	// writes are the files the line's redirections write to, as written
	// (each a plain word: no expansion, glob or quoting can change it), so
	// that a Write or Edit rule, or acceptEdits, can approve them. A target
	// that is not a plain word makes the line unsafe instead.
	writes []string
	// opaque lines spell a program in a way that cannot be read without
	// running the shell (globs, brace or parameter expansion, $'\x..'): no
	// deny rule can be shown not to match, so they are asked about, even in
	// bypassPermissions mode, whenever deny rules exist.
	opaque bool
	// cmds are the simple commands of parts again (same order, one for each
	// part the parser found), as the words the program receives, for the
	// option checks of prefix rules (options.go).
	cmds []shCmd
	// chdir is set when the line changes directory (cd, pushd, popd): a
	// relative path it writes may then be anywhere.
	chdir bool
}

// shCmd is one simple command as its program sees it.
type shCmd struct {
	part string   // as written (the text allow rules match)
	args []shWord // its words, program first
}

// shWord is one word of a command: its text with the quoting removed, and
// whether that text is all the shell makes of it (no expansion, glob or
// brace: lit) or only a spelling of something the shell computes.
type shWord struct {
	text string
	lit  bool
	// head is the literal text before the first part the shell computes
	// (all of text when lit): "--message=" for --message="$(cat m)".
	head string
}

// maxVettedLine bounds the lines the parser vets (the check's cost grows
// with nesting); longer ones need a rule for all of Bash or a human.
const maxVettedLine = 16 << 10

// parseShell parses a command line with a real shell parser (comments,
// $'...' quoting, nested substitutions, arithmetic and here-documents are
// all bash's, not an approximation).
func parseShell(line string) shellLine {
	var sl shellLine
	if len(line) > maxVettedLine {
		sl.unsafe = fmt.Sprintf("the command line is longer than %d bytes", maxVettedLine)
		sl.opaque = true
		sl.parts = []string{strings.TrimSpace(line)}
		sl.names = sl.parts
		return sl
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		sl.unsafe = "the command line does not parse as bash (" + err.Error() + ")"
		sl.opaque = true
		sl.parts = []string{strings.TrimSpace(line)}
		sl.names = sl.parts
		return sl
	}
	collect(&sl, line, f, 0)
	if len(sl.parts) == 0 {
		sl.parts = []string{strings.TrimSpace(line)}
	}
	return sl
}

// collect walks a parsed line (or a nested "sh -c" script) for its commands.
func collect(sl *shellLine, src string, node syntax.Node, depth int) {
	flag := func(why string) {
		if sl.unsafe == "" {
			sl.unsafe = why
		}
	}
	syntax.Walk(node, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Redirect:
			if trust.RedirectWrites(x) {
				if target, ok := plainTarget(x); ok {
					sl.writes = append(sl.writes, target)
				} else {
					flag("it redirects output into a file named by an expansion (" + strings.TrimSpace(source(src, x.Pos(), x.End())) + ")")
				}
			}
		case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
			flag("it evaluates arithmetic, which can run commands hidden in variables")
		case *syntax.TestClause:
			flag("it uses [[ ]], which can evaluate arithmetic on variables")
		case *syntax.DeclClause:
			flag("it declares or exports variables, which can change what later commands do")
		case *syntax.FuncDecl:
			flag("it defines a shell function")
		case *syntax.ParamExp:
			if !x.Short && (x.Index != nil || x.Slice != nil || x.Excl || x.Exp != nil || x.Repl != nil || x.Length) {
				flag("it uses a parameter expansion that can evaluate code")
			}
		case *syntax.CallExpr:
			if len(x.Args) == 0 {
				if len(x.Assigns) > 0 {
					flag("it sets shell variables, which can change what later commands do")
				}
				return true
			}
			sl.parts = append(sl.parts, strings.TrimSpace(source(src, x.Pos(), x.End())))
			cmd := shCmd{part: sl.parts[len(sl.parts)-1]}
			for _, w := range x.Args {
				cmd.args = append(cmd.args, wordOf(src, w))
			}
			sl.cmds = append(sl.cmds, cmd)
			if changesDir(cmd.args) {
				sl.chdir = true
			}
			name, script, opaque := normalise(src, x)
			if name != "" {
				sl.names = append(sl.names, name)
			}
			sl.opaque = sl.opaque || opaque
			if script != "" && depth < 3 {
				if f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), ""); err == nil {
					collect(sl, script, f, depth+1)
				} else if sl.unsafe == "" {
					sl.unsafe = "a nested shell script does not parse"
				}
			}
		}
		return true
	})
}

func source(src string, from, to syntax.Pos) string {
	a, b := int(from.Offset()), int(to.Offset())
	if a < 0 || b > len(src) || a > b {
		return ""
	}
	return src[a:b]
}

// plainTarget returns the file a writing redirection names when the shell
// cannot make anything else of it: one literal word, unquoted or quoted
// whole, with no expansion, glob, brace or "~user" in it.
func plainTarget(r *syntax.Redirect) (string, bool) {
	if r.Word == nil || len(r.Word.Parts) != 1 {
		return "", false
	}
	var w string
	switch p := r.Word.Parts[0].(type) {
	case *syntax.Lit:
		if strings.ContainsAny(p.Value, "*?[]{}\\") || (strings.HasPrefix(p.Value, "~") && !strings.HasPrefix(p.Value, "~/")) {
			return "", false
		}
		w = p.Value
	case *syntax.SglQuoted:
		if p.Dollar {
			return "", false
		}
		w = p.Value
	case *syntax.DblQuoted:
		if len(p.Parts) != 1 {
			return "", false
		}
		lit, ok := p.Parts[0].(*syntax.Lit)
		if !ok || strings.Contains(lit.Value, "\\") {
			return "", false
		}
		w = lit.Value
	default:
		return "", false
	}
	if _, lit := r.Word.Parts[0].(*syntax.Lit); !lit && strings.HasPrefix(w, "~") {
		return "", false // a quoted "~" is a file named ~, which resolvePath would not see
	}
	return w, w != ""
}

// gitGlobal are git's options before the subcommand that take a value.
var gitGlobal = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true, "--exec-path": true, "--config-env": true}
})

// normalise returns the command's words from its program on, unquoted, with
// assignments and wrappers dropped and the program reduced to its base name
// (git's global options dropped too); for "sh -c SCRIPT" (bash, zsh, dash
// too) and eval, the script to look into; and whether the program is spelt
// in a way only the shell can resolve.
func normalise(src string, c *syntax.CallExpr) (string, string, bool) {
	words := make([]string, 0, len(c.Args))
	opaque := false
	for _, w := range c.Args {
		words = append(words, unquote(source(src, w.Pos(), w.End())))
	}
	i := 0
	for i < len(words) {
		w := words[i]
		if _, ok := trust.WrapperOptions(path.Base(w)); ok {
			// Past the wrapper's options (and their values), env's VAR=x,
			// and timeout's or nice's number: the program.
			if i = trust.SkipWrapper(words, i); i >= len(words) {
				continue
			}
			goto program
		}
		if strings.Contains(w, "=") && !strings.HasPrefix(w, "=") {
			i++
			continue
		}
	program:
		if i >= len(words) {
			break
		}
		raw := source(src, c.Args[i].Pos(), c.Args[i].End())
		if strings.ContainsAny(raw, "{*?[$`") {
			opaque = true
		}
		prog := path.Base(words[i])
		args := words[i+1:]
		if prog == "git" {
			for len(args) > 0 && strings.HasPrefix(args[0], "-") {
				if gitGlobal()[args[0]] && len(args) > 1 {
					args = args[2:]
				} else {
					args = args[1:]
				}
			}
		}
		rest := append([]string{prog}, args...)
		script := ""
		if prog == "sh" || prog == "bash" || prog == "zsh" || prog == "dash" {
			for j := 1; j < len(rest); j++ {
				a := rest[j]
				if a == "--" {
					continue
				}
				if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c") {
					// -c, -xc, -ec ...: the script is the next word that
					// is not an option.
					for k := j + 1; k < len(rest); k++ {
						if rest[k] != "--" && !strings.HasPrefix(rest[k], "-") {
							script = rest[k]
							break
						}
					}
					break
				}
				if !strings.HasPrefix(a, "-") {
					break
				}
			}
		}
		if prog == "eval" && len(rest) > 1 {
			script = strings.Join(rest[1:], " ")
		}
		return strings.Join(rest, " "), script, opaque
	}
	return "", "", opaque
}

// unquote drops the quoting characters of a shell word: enough to see the
// name a word spells, not a full expansion.
func unquote(w string) string {
	if strings.HasPrefix(w, "$'") && strings.HasSuffix(w, "'") && len(w) >= 3 {
		w = w[2 : len(w)-1]
	}
	return strings.NewReplacer(`'`, "", `"`, "", `\`, "").Replace(w)
}

// splitCommand is parseShell's parts (kept for the tests that pin them).
func splitCommand(line string) []string { return parseShell(line).parts }
