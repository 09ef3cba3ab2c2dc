package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/broodhq/brood/internal/model"
)

// lsMaxEntries caps one listing; a larger tree is better explored in parts.
const lsMaxEntries = 1000

// LS lists a directory tree.
type LS struct{}

type lsInput struct {
	Path   string   `json:"path"`
	Ignore []string `json:"ignore"`
}

func (*LS) Spec() model.ToolSpec {
	return spec("LS", lsDescription, `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "The directory to list (absolute, or relative to the workspace). Defaults to the workspace"},
    "ignore": {"type": "array", "items": {"type": "string"}, "description": "Glob patterns of names or paths to leave out"}
  },
  "additionalProperties": false
}`)
}

func (*LS) ReadOnly() bool { return true }

func (*LS) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var in lsInput
	if r, ok := decode("LS", input, &in); !ok {
		return r
	}
	root := env.abs(in.Path)
	if r, ok := searchRoot(root, "LS"); !ok {
		return r
	}
	for _, p := range in.Ignore {
		if !doublestar.ValidatePattern(p) {
			return Errorf("invalid ignore pattern %q: check for an unbalanced [ or {", p)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- %s/\n", strings.TrimSuffix(root, "/"))
	n, cut := 0, false
	w := walker{env: env, visit: func(abs string, d fs.DirEntry) error {
		rel, err := filepath.Rel(root, abs)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		for _, p := range in.Ignore {
			p = strings.TrimSuffix(p, "/")
			if ok, _ := doublestar.Match(p, path.Base(rel)); ok {
				return skip(d)
			}
			if ok, _ := doublestar.Match(p, rel); ok {
				return skip(d)
			}
		}
		if n == lsMaxEntries {
			cut = true
			return errStopWalk
		}
		n++
		name := d.Name()
		if d.IsDir() {
			name += "/"
		}
		fmt.Fprintf(&b, "%s- %s\n", strings.Repeat("  ", strings.Count(rel, "/")+1), name)
		return nil
	}}
	if err := w.walk(ctx, root); err != nil {
		return Errorf("LS stopped: %v", err)
	}
	if cut {
		fmt.Fprintf(&b, "(listing cut at %d entries; list a subdirectory, or use Glob to find files by pattern)\n", lsMaxEntries)
	}
	if n == 0 {
		b.WriteString("  (empty, or everything in it is ignored)\n")
	}
	return Result{Content: strings.TrimSuffix(b.String(), "\n")}
}

// skip leaves out an entry: a directory with everything in it.
func skip(d fs.DirEntry) error {
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}
