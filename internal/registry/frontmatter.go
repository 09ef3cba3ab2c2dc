package registry

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// document is a Markdown file split at its frontmatter fences.
type document struct {
	front string // the YAML between the fences
	body  string // everything after the closing fence
}

// errNoFrontmatter marks a file that is documentation, not a definition.
var errNoFrontmatter = errors.New("no frontmatter")

// lineError is a problem with a known line in the file (1-based).
type lineError struct {
	line int
	msg  string
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// normalize strips a UTF-8 byte-order mark and turns CRLF (and lone CR) line
// ends into LF, as editors on every platform produce them.
func normalize(data []byte) string {
	s := strings.TrimPrefix(string(data), "\uFEFF")
	if strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
		s = strings.ReplaceAll(s, "\r", "\n")
	}
	return s
}

// isFence reports whether a line is a "---" fence (trailing blanks allowed).
func isFence(line string) bool {
	return strings.TrimRight(line, " \t") == "---"
}

// split finds the frontmatter. It must start at byte 0, as in Claude Code:
// a file that doesn't open with a fence is documentation and errNoFrontmatter
// says so. The YAML keeps its line numbers: its line n is file line n+1.
func split(text string) (document, error) {
	first, rest, _ := strings.Cut(text, "\n")
	if !isFence(first) {
		return document{}, errNoFrontmatter
	}
	lines := strings.Split(rest, "\n")
	for i, l := range lines {
		if isFence(l) {
			return document{
				front: strings.Join(lines[:i], "\n"),
				body:  strings.Join(lines[i+1:], "\n"),
			}, nil
		}
	}
	return document{}, &lineError{line: 1, msg: "frontmatter opened here is never closed with a --- line"}
}

// field is one top-level frontmatter entry.
type field struct {
	key   string
	value any // string, bool, int64/uint64/float64, []any, map[string]any or nil
	line  int // file line of the key
}

// frontmatter is the decoded mapping plus how it had to be read.
type frontmatter struct {
	fields []field
	// quoted lists the file lines whose values had to be quoted before the
	// YAML parsed; empty when it was valid as written.
	quoted []int
	// strictErr is the original YAML error when quoting was needed.
	strictErr *lineError
}

// parseFrontmatter decodes the YAML between the fences. When strict YAML
// rejects it, it retries after quoting the top-level values that can't stand
// on their own (Claude Code does the same), because published agent files are
// full of one-line descriptions with an unquoted ": " or "#" in them.
func parseFrontmatter(front string) (frontmatter, error) {
	if err := checkShape(front); err != nil {
		return frontmatter{}, err
	}
	fields, err := decodeStrict(front)
	if err == nil && !lostText(front, fields) {
		return frontmatter{fields: fields}, nil
	}
	var strictErr *lineError
	errors.As(err, &strictErr)
	fixed, quoted := quoteValues(front)
	if len(quoted) == 0 {
		if err != nil {
			return frontmatter{}, err
		}
		return frontmatter{fields: fields}, nil
	}
	fields2, err2 := decodeStrict(fixed)
	if err2 != nil {
		if err != nil {
			return frontmatter{}, err2 // what is still wrong after quoting
		}
		return frontmatter{fields: fields}, nil
	}
	return frontmatter{fields: fields2, quoted: quoted, strictErr: strictErr}, nil
}

// Bounds on frontmatter before the YAML parser sees it: agent frontmatter is
// a few flat keys, and a deeply nested document makes the parser take
// minutes and gigabytes (a cloned repository must not be able to stall
// brood's start-up).
const (
	maxFrontmatter = 64 << 10
	maxNesting     = 64
)

func checkShape(front string) error {
	if len(front) > maxFrontmatter {
		return &lineError{line: 2, msg: fmt.Sprintf("frontmatter is larger than %d KiB; an agent's frontmatter is a few keys", maxFrontmatter>>10)}
	}
	depth, line := 0, 2
	for i := 0; i < len(front); i++ {
		switch front[i] {
		case '\n':
			line++
		case '[', '{':
			if depth++; depth > maxNesting {
				return &lineError{line: line, msg: fmt.Sprintf("frontmatter nests deeper than %d levels", maxNesting)}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// decodeStrict parses YAML text that must be a mapping at the top level. A
// panic in the YAML library is turned into an error: a loader never panics.
func decodeStrict(text string) (fields []field, err error) {
	defer func() {
		if p := recover(); p != nil {
			fields, err = nil, &lineError{line: 2, msg: fmt.Sprintf("YAML parser failed: %v", p)}
		}
	}()
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	file, err := parser.ParseBytes([]byte(text), 0)
	if err != nil {
		return nil, yamlError(err)
	}
	if len(file.Docs) != 1 {
		return nil, &lineError{line: 2, msg: "frontmatter holds more than one YAML document"}
	}
	body := file.Docs[0].Body
	if body == nil {
		return nil, nil
	}
	var pairs []*ast.MappingValueNode
	switch n := body.(type) {
	case *ast.MappingNode:
		pairs = n.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{n}
	case *ast.CommentNode:
		return nil, nil
	default:
		return nil, &lineError{line: nodeLine(body), msg: "frontmatter is not a mapping of keys to values"}
	}
	for _, p := range pairs {
		line := nodeLine(p.Key)
		key := strings.TrimSpace(p.Key.String())
		if k, ok := p.Key.(*ast.StringNode); ok {
			key = k.Value
		}
		var v any
		if err := yaml.NodeToValue(p.Value, &v); err != nil {
			return nil, &lineError{line: line, msg: fmt.Sprintf("value of %q: %s", key, yamlMessage(err))}
		}
		fields = append(fields, field{key: key, value: plain(v), line: line})
	}
	return fields, nil
}

// nodeLine maps a node to its file line (YAML line + 1 for the fence).
func nodeLine(n ast.Node) int {
	if n == nil || n.GetToken() == nil {
		return 2
	}
	return n.GetToken().Position.Line + 1
}

// yamlError turns the YAML library's error into a lineError with the file
// line, so every diagnostic can point at the line to fix.
func yamlError(err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		return &lineError{line: ye.GetToken().Position.Line + 1, msg: ye.GetMessage()}
	}
	return &lineError{line: 2, msg: err.Error()}
}

func yamlMessage(err error) string {
	var ye yaml.Error
	if errors.As(err, &ye) {
		return ye.GetMessage()
	}
	return err.Error()
}

// plain converts decoded YAML into JSON-friendly Go values: maps with string
// keys all the way down.
func plain(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = plain(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = plain(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = plain(e)
		}
		return t
	}
	return v
}

// entryRE matches a top-level "key: value" line: a bare key at column 0.
var entryRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*?))?[ \t]*$`)
})

// entry is one top-level key line and the indented lines that continue it.
type entry struct {
	start, end int // line indexes into the frontmatter, end exclusive
	key, value string
}

// entries finds the top-level entries of the frontmatter text.
func entries(lines []string) []entry {
	var out []entry
	for i := 0; i < len(lines); i++ {
		m := entryRE().FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		e := entry{start: i, end: i + 1, key: m[1], value: m[2]}
		for e.end < len(lines) {
			l := lines[e.end]
			if strings.TrimSpace(l) != "" && l[0] != ' ' && l[0] != '\t' {
				break
			}
			e.end++
		}
		// Trailing blank lines belong to no one.
		for e.end > e.start+1 && strings.TrimSpace(lines[e.end-1]) == "" {
			e.end--
		}
		out = append(out, e)
		i = e.end - 1
	}
	return out
}

// quoteValues rewrites every top-level entry whose value YAML can't read on
// its own (or reads as nothing, because it starts with "#") as one
// double-quoted line, keeping the text exactly as written. Lines the value
// spanned are left blank so that line numbers still match the file. It
// returns the file lines it changed.
func quoteValues(front string) (string, []int) {
	lines := strings.Split(front, "\n")
	var quoted []int
	for _, e := range entries(lines) {
		if e.value == "" || strings.HasPrefix(e.value, "|") || strings.HasPrefix(e.value, ">") {
			continue // nested block or block scalar: nothing to quote
		}
		chunk := strings.Join(lines[e.start:e.end], "\n")
		if f, err := decodeStrict(chunk); err == nil && !lostText(chunk, f) {
			continue
		}
		text := e.value
		for _, l := range lines[e.start+1 : e.end] {
			if t := strings.TrimSpace(l); t != "" {
				text += " " + t
			}
		}
		lines[e.start] = e.key + ": " + quote(text)
		for i := e.start + 1; i < e.end; i++ {
			lines[i] = ""
		}
		quoted = append(quoted, e.start+2)
	}
	return strings.Join(lines, "\n"), quoted
}

// lostText reports whether YAML decoded a top-level value as empty although
// its line carries text: "description: # Title" is a comment to YAML but
// plainly a description to its author.
func lostText(front string, fields []field) bool {
	lines := strings.Split(front, "\n")
	for _, f := range fields {
		if f.value != nil || f.line-2 < 0 || f.line-2 >= len(lines) {
			continue
		}
		if m := entryRE().FindStringSubmatch(lines[f.line-2]); m != nil && strings.HasPrefix(m[2], "#") {
			return true
		}
	}
	return false
}

// quote renders s as a YAML double-quoted scalar that decodes back to s.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r == 0xFEFF || r == 0x85 || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
