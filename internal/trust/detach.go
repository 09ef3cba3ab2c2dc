package trust

import (
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// detaches reports a command that may start nohup, setsid or disown: any
// of its words, or any field of a word (env -S 'setsid x'), names one,
// whatever runs it (flock, unshare, chroot, busybox, xargs, parallel,
// watch, find -exec...), unless the command's program, after its
// assignments and wrappers, only reads text and runs nothing
// (readsOnlyText): grep setsid notes.txt is no job.
func detaches(c *syntax.CallExpr) bool {
	var words []string
	for _, w := range c.Args {
		words = append(words, wordText(w, ""))
	}
	named := false
	for _, w := range words {
		for _, f := range strings.FieldsFunc(w, notNameRune) {
			switch filepath.Base(f) {
			case "nohup", "setsid", "disown":
				named = true
			}
		}
	}
	if !named {
		return false
	}
	i := 0
	for i < len(words) {
		if isAssignment(words[i]) {
			i++
			continue
		}
		if _, wrapper := WrapperOptions(filepath.Base(words[i])); !wrapper {
			break
		}
		i = SkipWrapper(words, i)
	}
	return i >= len(words) || !readsOnlyText(words[i:])
}

// readsOnlyText reports a command (its program first) that reads text
// and prints it, running no other program whatever its arguments say:
// grep and the like, cat, head, tail, wc, echo, printf; sed -n without
// -i, -f or an e command; awk whose program calls no system(), pipe or
// redirection.
func readsOnlyText(words []string) bool {
	switch filepath.Base(words[0]) {
	case "grep", "egrep", "fgrep", "cat", "head", "tail", "wc", "echo", "printf", "less", "more":
		return true
	case "rg":
		return !slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, "--pre") })
	case "sed":
		return sedReads(words[1:])
	case "awk", "gawk", "mawk":
		return awkReads(words[1:])
	}
	return false
}

// sedReads: sed -n whose script (its first operand or -e values) has no e
// command or flag once the detach words are taken out.
func sedReads(args []string) bool {
	quiet, scripts, operands := false, []string{}, 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-n" || a == "--quiet" || a == "--silent":
			quiet = true
		case a == "-e" && i+1 < len(args):
			i++
			scripts = append(scripts, args[i])
		case strings.HasPrefix(a, "-"):
			return false // -i, -f, -s... or an option not read here
		default:
			if operands == 0 && len(scripts) == 0 {
				scripts = append(scripts, a)
			}
			operands++
		}
	}
	for _, s := range scripts {
		for _, d := range []string{"nohup", "setsid", "disown"} {
			s = strings.ReplaceAll(s, d, "")
		}
		if strings.ContainsAny(s, "ewW") {
			return false
		}
	}
	return quiet && len(scripts) > 0
}

// awkReads: awk whose program (its first operand; no -f) runs nothing.
func awkReads(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-F" || a == "-v":
			i++
		case strings.HasPrefix(a, "-F") || strings.HasPrefix(a, "-v"):
		case strings.HasPrefix(a, "-"):
			return false
		default:
			return !strings.Contains(a, "system") && !strings.ContainsAny(a, "|>")
		}
	}
	return false
}

// notNameRune: a rune no program name or path has (a space, a quote, a
// brace, an operator), where detaches splits a word.
func notNameRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./+", r))
}
