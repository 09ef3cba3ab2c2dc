package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/broodhq/brood/internal/model"
)

// globMaxResults caps the paths one Glob call returns.
const globMaxResults = 100

// Glob finds files by name pattern.
type Glob struct{}

type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func (*Glob) Spec() model.ToolSpec {
	return spec("Glob", globDescription, `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "The glob pattern to match files against, e.g. \"**/*.go\""},
    "path": {"type": "string", "description": "The directory to search in. Defaults to the workspace; omit it rather than passing \"undefined\" or \"null\""}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)
}

func (*Glob) ReadOnly() bool { return true }

func (*Glob) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var in globInput
	if r, ok := decode("Glob", input, &in); !ok {
		return r
	}
	pattern := strings.TrimSpace(in.Pattern)
	if pattern == "" {
		return Errorf("pattern is empty: give a glob such as **/*.go")
	}
	if hasDotDot(pattern) {
		return Errorf("glob pattern %q has a .. element: give the directory to search as path (or an absolute pattern without ..) instead", in.Pattern)
	}
	// An absolute pattern carries its own root, which the permission
	// check judged (pathSubject).
	root, pattern := globRoot(env.abs(in.Path), pattern)
	pattern = strings.TrimPrefix(pattern, "./")
	if !doublestar.ValidatePattern(pattern) {
		return Errorf("invalid glob pattern %q: check for an unbalanced [ or {", in.Pattern)
	}
	if r, ok := searchRoot(root, "Glob"); !ok {
		return r
	}
	maxDepth := -1 // how deep a match can be; -1 when ** allows any depth
	if !strings.Contains(pattern, "**") {
		maxDepth = strings.Count(pattern, "/")
	}
	type hit struct {
		path string
		mod  time.Time
	}
	var hits []hit
	w := walker{env: env, visit: func(abs string, d fs.DirEntry) error {
		rel, err := filepath.Rel(root, abs)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if maxDepth >= 0 && strings.Count(rel, "/") >= maxDepth {
				return fs.SkipDir
			}
			return nil
		}
		if ok, _ := doublestar.Match(pattern, rel); ok {
			var mod time.Time
			if info, err := d.Info(); err == nil {
				mod = info.ModTime()
			}
			hits = append(hits, hit{abs, mod})
		}
		return nil
	}}
	if err := w.walk(ctx, root); err != nil {
		return Errorf("Glob stopped: %v", err)
	}
	if len(hits) == 0 {
		return Result{Content: fmt.Sprintf("No files found matching %q in %s", in.Pattern, root)}
	}
	sort.Slice(hits, func(i, j int) bool {
		if !hits[i].mod.Equal(hits[j].mod) {
			return hits[i].mod.After(hits[j].mod)
		}
		return hits[i].path < hits[j].path
	})
	var b strings.Builder
	for i, h := range hits {
		if i == globMaxResults {
			fmt.Fprintf(&b, "(%d more not shown; narrow the pattern or the path)\n", len(hits)-globMaxResults)
			break
		}
		b.WriteString(h.path)
		b.WriteByte('\n')
	}
	return Result{Content: strings.TrimSuffix(b.String(), "\n")}
}

// searchRoot checks that a search path exists, saying what to do if not.
func searchRoot(root, toolName string) (Result, bool) {
	info, err := os.Stat(root)
	if err != nil {
		return Errorf("%s: the path %s does not exist; check it with LS, or omit path to search the workspace", toolName, root), false
	}
	if toolName != "Grep" && !info.IsDir() {
		return Errorf("%s: %s is a file, not a directory; give the directory to search", toolName, root), false
	}
	return Result{}, true
}
