package registry

import (
	"strconv"
	"strings"
)

// builtinFrontmatter is parseFrontmatter, through flatFields for a
// built-in agent (never for a file on disk, which the YAML parser reads
// whatever it holds).
func builtinFrontmatter(front string, src Source) (frontmatter, error) {
	if src == SourceBuiltin {
		if fields, ok := flatFields(front); ok {
			return frontmatter{fields: fields}, nil
		}
	}
	return parseFrontmatter(front)
}

// flatFields decodes frontmatter made only of "key: value" lines whose
// values are unmistakable YAML: a plain string starting with a letter, or
// true or false. It is for the built-in agents, parsed at every root's
// start: the YAML parser's first use costs a quarter of a millisecond
// there, for three files of such lines. ok is false for anything else
// (a comment, a quote, a bracket, a number or another boolean spelling,
// an indented line, a repeated key), which parseFrontmatter reads as
// always; TestFlatFieldsAsYAML holds it to the YAML parser's answer.
func flatFields(front string) (fields []field, ok bool) {
	seen := map[string]bool{}
	for i, line := range strings.Split(front, "\n") {
		if line == "" {
			continue
		}
		key, value, found := strings.Cut(line, ": ")
		if !found || !flatKey(key) || seen[key] || !flatValue(value) {
			return nil, false
		}
		seen[key] = true
		var v any = value
		if b, err := strconv.ParseBool(value); err == nil {
			if value != "true" && value != "false" {
				return nil, false
			}
			v = b
		}
		fields = append(fields, field{key: key, value: v, line: i + 2}) // the fence is line 1
	}
	return fields, true
}

// flatKey is a lower-case word (name, max_turns).
func flatKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return true
}

// flatValue is printable ASCII opening with a letter (so a quote inside
// it is the quote character), with nothing YAML reads as structure or a
// comment, and no spelling YAML 1.1 took for a boolean or null.
func flatValue(v string) bool {
	if v == "" || !isLetter(v[0]) || strings.HasSuffix(v, " ") || strings.HasSuffix(v, ":") ||
		strings.Contains(v, ": ") || strings.Contains(v, " #") {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c < ' ' || c > '~':
			return false
		case c == '[' || c == ']' || c == '{' || c == '}' || c == '`' || c == '\\' || c == '|' || c == '>' || c == '&' || c == '*' || c == '!' || c == '%' || c == '@':
			return false
		}
	}
	if len(v) <= 4 {
		switch strings.ToLower(v) {
		case "y", "n", "yes", "no", "on", "off", "null", "nan", "inf":
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
