package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/broodhq/brood/internal/model"
)

// grepMaxFileSize is the largest file Grep reads; bigger ones are skipped
// and counted, since they are almost always data, not code.
const grepMaxFileSize = 32 << 20

// grepTypes maps ripgrep's common --type names to file name globs.
var grepTypes = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"go": {"*.go"}, "py": {"*.py", "*.pyi"}, "python": {"*.py", "*.pyi"},
		"js": {"*.js", "*.mjs", "*.cjs", "*.jsx"}, "ts": {"*.ts", "*.tsx", "*.mts", "*.cts"},
		"rust": {"*.rs"}, "java": {"*.java"}, "kotlin": {"*.kt", "*.kts"},
		"c": {"*.c", "*.h"}, "cpp": {"*.cpp", "*.cc", "*.cxx", "*.hpp", "*.hh", "*.hxx", "*.h"},
		"cs": {"*.cs"}, "rb": {"*.rb"}, "ruby": {"*.rb"}, "php": {"*.php"}, "swift": {"*.swift"},
		"scala": {"*.scala"}, "lua": {"*.lua"}, "sh": {"*.sh", "*.bash", "*.zsh"},
		"md": {"*.md", "*.markdown"}, "markdown": {"*.md", "*.markdown"}, "json": {"*.json"},
		"yaml": {"*.yaml", "*.yml"}, "toml": {"*.toml"}, "html": {"*.html", "*.htm"},
		"css": {"*.css", "*.scss", "*.sass", "*.less"}, "sql": {"*.sql"}, "proto": {"*.proto"},
		"txt": {"*.txt"}, "xml": {"*.xml"}, "make": {"Makefile", "*.mk", "GNUmakefile"},
	}
})

// Grep searches file contents with a regular expression.
type Grep struct{}

type grepInput struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	Type       string `json:"type"`
	OutputMode string `json:"output_mode"`
	IgnoreCase bool   `json:"-i"`
	LineNums   *bool  `json:"-n"`
	After      int    `json:"-A"`
	Before     int    `json:"-B"`
	Context    int    `json:"-C"`
	HeadLimit  int    `json:"head_limit"`
	Multiline  bool   `json:"multiline"`
}

func (*Grep) Spec() model.ToolSpec {
	return spec("Grep", grepDescription, `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "The regular expression (Go RE2 syntax) to search for in file contents"},
    "path": {"type": "string", "description": "File or directory to search in. Defaults to the workspace"},
    "glob": {"type": "string", "description": "Glob to filter files, e.g. \"*.js\" or \"**/*.{ts,tsx}\""},
    "type": {"type": "string", "description": "File type to search: go, py, js, ts, rust, java, c, cpp, rb, md, json, yaml, ..."},
    "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "content shows matching lines; files_with_matches (default) lists matching files; count shows match counts per file"},
    "-i": {"type": "boolean", "description": "Case-insensitive search"},
    "-n": {"type": "boolean", "description": "Show line numbers (content mode; default true)"},
    "-A": {"type": "integer", "description": "Lines to show after each match (content mode)"},
    "-B": {"type": "integer", "description": "Lines to show before each match (content mode)"},
    "-C": {"type": "integer", "description": "Lines to show before and after each match (content mode)"},
    "head_limit": {"type": "integer", "description": "Keep only the first N lines or entries of the output"},
    "multiline": {"type": "boolean", "description": "Let . match newlines and patterns span lines (default false)"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

func (*Grep) ReadOnly() bool { return true }

func (*Grep) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var in grepInput
	if r, ok := decode("Grep", input, &in); !ok {
		return r
	}
	if in.Pattern == "" {
		return Errorf("pattern is empty: give a regular expression to search for")
	}
	mode := in.OutputMode
	if mode == "" {
		mode = "files_with_matches"
	}
	if mode != "files_with_matches" && mode != "content" && mode != "count" {
		return Errorf("unknown output_mode %q: use files_with_matches, content or count", in.OutputMode)
	}
	flags := ""
	if in.IgnoreCase {
		flags += "i"
	}
	if in.Multiline {
		flags += "sm"
	}
	expr := in.Pattern
	if flags != "" {
		expr = "(?" + flags + ")" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Errorf("invalid regular expression %q: %v. Grep uses Go (RE2) syntax: escape literal ( [ { . * + ? and use \\b, \\s, \\w as usual; lookarounds and backreferences are not supported", in.Pattern, err)
	}
	globs := splitGlobs(in.Glob)
	for _, g := range globs {
		if !doublestar.ValidatePattern(g) {
			return Errorf("invalid glob %q: check for an unbalanced [ or {", g)
		}
	}
	var types []string
	if in.Type != "" {
		t, ok := grepTypes()[strings.ToLower(in.Type)]
		if !ok {
			known := make([]string, 0, len(grepTypes()))
			for k := range grepTypes() {
				known = append(known, k)
			}
			sort.Strings(known)
			return Errorf("unknown file type %q; known types: %s. Or filter with glob instead", in.Type, strings.Join(known, ", "))
		}
		types = t
	}
	return grepRun(ctx, env, in, re, mode, globs, types)
}

// splitGlobs reads a glob option that may list several patterns separated
// by spaces or commas outside braces, as models often write "*.ts *.tsx".
func splitGlobs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch {
		case c == '{':
			depth++
		case c == '}':
			depth--
		case (c == ' ' || c == ',') && depth == 0:
			if p := strings.TrimSpace(s[start:i]); p != "" {
				out = append(out, p)
			}
			start = i + 1
		}
	}
	if p := strings.TrimSpace(s[start:]); p != "" {
		out = append(out, p)
	}
	return out
}

// matchGlobs reports whether rel (slash-separated, from the search root)
// passes a filter: a pattern without a slash matches the base name at any
// depth, as ripgrep's --glob does. An empty filter passes everything.
func matchGlobs(globs []string, rel string) bool {
	if len(globs) == 0 {
		return true
	}
	for _, g := range globs {
		target := rel
		if !strings.Contains(g, "/") {
			target = path.Base(rel)
		}
		if ok, _ := doublestar.Match(strings.TrimPrefix(g, "./"), target); ok {
			return true
		}
	}
	return false
}

func grepRun(ctx context.Context, env *Env, in grepInput, re *regexp.Regexp, mode string, globs, types []string) Result {
	root := env.abs(in.Path)
	if r, ok := searchRoot(root, "Grep"); !ok {
		return r
	}
	before, after := max(in.Before, in.Context, 0), max(in.After, in.Context, 0)
	lineNums := in.LineNums == nil || *in.LineNums
	out := newLineSink(in.HeadLimit, env.outputLimit())
	files, skippedBig := 0, 0
	w := walker{env: env, visit: func(abs string, d fs.DirEntry) error {
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(root, abs)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = d.Name()
		}
		if !matchGlobs(globs, rel) || !matchGlobs(types, rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		if info.Size() > grepMaxFileSize {
			skippedBig++
			return nil
		}
		data, err := os.ReadFile(abs)
		if err != nil || isBinary(data) {
			return nil
		}
		matches := findMatches(re, data, in.Multiline)
		if len(matches) == 0 {
			return nil
		}
		files++
		switch mode {
		case "files_with_matches":
			out.add(abs)
		case "count":
			out.add(fmt.Sprintf("%s:%d", abs, len(matches)))
		default:
			writeContent(out, abs, data, matches, before, after, lineNums)
		}
		if out.full() {
			return errStopWalk
		}
		return nil
	}}
	if err := w.walk(ctx, root); err != nil {
		return Errorf("Grep stopped: %v", err)
	}
	var b strings.Builder
	if files == 0 {
		fmt.Fprintf(&b, "No matches for %q in %s", in.Pattern, root)
	} else {
		b.WriteString(out.String())
	}
	if skippedBig > 0 {
		fmt.Fprintf(&b, "\n(%d files over %d MB were not searched)", skippedBig, grepMaxFileSize>>20)
	}
	return Result{Content: b.String()}
}
