package projectfiles

import (
	"regexp"
	"strings"
	"sync"
)

// importRef is an @import as Claude Code reads one: @ at the start of the
// text or after white space, then a path (spaces escaped as "\ ").
var importRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)@((?:[^\s\\]|\\ )+)`) })

// codeSpan is inline code, where an @ is text, not an import.
var codeSpan = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`[^`\n]*`") })

// importAt is one @import: its path as written and its line (from 1).
type importAt struct {
	path string
	line int
}

// imports lists the paths text imports, in order, outside code blocks and
// code spans (an address such as a@b.c is no import: its @ follows a
// letter).
func imports(text string) []importAt {
	var out []importAt
	fenced := false
	for n, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = codeSpan().ReplaceAllString(line, "")
		for _, m := range importRef().FindAllStringSubmatch(line, -1) {
			p := strings.TrimRight(strings.ReplaceAll(m[1], `\ `, " "), ".,;:)")
			if p != "" {
				out = append(out, importAt{p, n + 1})
			}
		}
	}
	return out
}
