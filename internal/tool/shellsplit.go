package tool

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
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
	// unsafe, when set, says why no allow rule may approve the line: it does
	// not parse, or it writes a file through a redirection (an allowed
	// "git status > ~/.bashrc" would write anywhere).
	unsafe string
}

// parseShell parses a command line with a real shell parser (comments,
// $'...' quoting, nested substitutions, arithmetic and here-documents are
// all bash's, not an approximation).
func parseShell(line string) shellLine {
	var sl shellLine
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
	if err != nil {
		sl.unsafe = "the command line does not parse as bash (" + err.Error() + ")"
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
	syntax.Walk(node, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.Redirect:
			if writesFile(x) && sl.unsafe == "" {
				sl.unsafe = "it redirects output into a file (" + strings.TrimSpace(source(src, x.Pos(), x.End())) + ")"
			}
		case *syntax.CallExpr:
			if len(x.Args) == 0 {
				return true
			}
			sl.parts = append(sl.parts, strings.TrimSpace(source(src, x.Pos(), x.End())))
			name, script := normalise(src, x)
			if name != "" {
				sl.names = append(sl.names, name)
			}
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

// writesFile reports a redirection that writes to a named file (not a file
// descriptor, not /dev/null).
func writesFile(r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
	default:
		return false
	}
	if r.Word == nil {
		return true
	}
	target := unquote(r.Word.Lit())
	return target != "/dev/null" && target != "/dev/stdout" && target != "/dev/stderr"
}

// wrappers run the command given as their arguments.
var wrappers = map[string]bool{
	"command": true, "builtin": true, "exec": true, "env": true, "nohup": true, "time": true,
	"xargs": true, "nice": true, "timeout": true, "stdbuf": true, "sudo": true, "doas": true, "unbuffer": true,
}

// normalise returns the command's words from its program on, unquoted, with
// assignments and wrappers dropped and the program reduced to its base name;
// and, for "sh -c SCRIPT" (bash, zsh, dash too), the script to look into.
func normalise(src string, c *syntax.CallExpr) (string, string) {
	words := make([]string, 0, len(c.Args))
	for _, w := range c.Args {
		words = append(words, unquote(source(src, w.Pos(), w.End())))
	}
	i := 0
	for i < len(words) {
		w := words[i]
		switch {
		case wrappers[path.Base(w)]:
			i++
			// Skip the wrapper's own options and arguments (env's VAR=x,
			// timeout's duration, nice's -n 5) up to the program.
			for i < len(words) && (strings.HasPrefix(words[i], "-") || strings.Contains(words[i], "=") || isNumberish(words[i])) {
				i++
			}
		case strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
			i++
		default:
			prog := path.Base(w)
			rest := append([]string{prog}, words[i+1:]...)
			script := ""
			if (prog == "sh" || prog == "bash" || prog == "zsh" || prog == "dash") && len(rest) > 2 && rest[1] == "-c" {
				script = rest[2]
			}
			if prog == "eval" && len(rest) > 1 {
				script = strings.Join(rest[1:], " ")
			}
			return strings.Join(rest, " "), script
		}
	}
	return "", ""
}

func isNumberish(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.smhd") == ""
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
