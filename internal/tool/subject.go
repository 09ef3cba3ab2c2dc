package tool

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// subjectText is the string a call of tool gives in the tool's own subject
// field (SubjectField), "" when it gives none. No other field counts: a
// stray file_path beside Grep's path names nothing Grep acts on.
func subjectText(tool string, input json.RawMessage) string {
	return stringField(input, SubjectField(tool))
}

// stringField is the string under key in the JSON object input, "" when
// there is none.
func stringField(input json.RawMessage, key string) string {
	if key == "" {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(obj[key], &s) != nil {
		return ""
	}
	return s
}

// pathSubject is the absolute path a call of a path tool (Read, Write,
// Edit, MultiEdit, NotebookEdit, Glob, Grep, LS) acts on, resolved against
// dir: its own path field, or dir for a search with none; for Glob, the
// directory it walks, which an absolute pattern chooses.
func pathSubject(tool string, input json.RawMessage, dir string) string {
	p := resolvePath(dir, subjectText(tool, input))
	if tool == "Glob" {
		p, _ = globRoot(p, strings.TrimSpace(stringField(input, "pattern")))
	}
	return p
}

// globRoot is the directory a Glob of pattern under root walks and the
// pattern it matches there: an absolute pattern carries its own root, the
// fixed directory part before its first glob metacharacter.
func globRoot(root, pattern string) (string, string) {
	if !filepath.IsAbs(pattern) {
		return root, pattern
	}
	base, rest := doublestar.SplitPattern(pattern)
	return filepath.Clean(base), rest
}

// hasDotDot reports whether a slash-separated pattern has a ".." element.
func hasDotDot(pattern string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(pattern), "/"), "..")
}
