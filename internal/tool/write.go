package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/broodhq/brood/internal/model"
)

// Write creates or replaces a whole file.
type Write struct{}

type writeInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

func (*Write) Spec() model.ToolSpec {
	return spec("Write", writeDescription, `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The path of the file to write (absolute, or relative to the workspace)"},
    "content": {"type": "string", "description": "The content to write to the file"}
  },
  "required": ["file_path", "content"],
  "additionalProperties": false
}`)
}

func (*Write) ReadOnly() bool { return false }

func (*Write) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var in writeInput
	if r, ok := decode("Write", input, &in); !ok {
		return r
	}
	if strings.TrimSpace(in.FilePath) == "" {
		return Errorf("file_path is empty: give the path of the file to write")
	}
	abs := env.abs(in.FilePath)
	existed, err := writeFileAtomic(abs, []byte(in.Content))
	if err != nil {
		return Errorf("cannot write %s: %v", abs, err)
	}
	verb := "Created"
	if existed {
		verb = "Overwrote"
	}
	return Result{Content: fmt.Sprintf("%s %s (%d bytes, %d lines)", verb, abs, len(in.Content), countLines(in.Content))}
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// writeFileAtomic replaces the file at abs with data so that a reader sees
// the old or the new content, never half of it: it writes a temporary file
// next to the target and renames it over. A symlink is followed (its target
// is replaced, the link stays), an existing file keeps its mode, and missing
// parent directories are created. It reports whether the file existed.
func writeFileAtomic(abs string, data []byte) (existed bool, err error) {
	target := abs
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		target = real
	}
	mode := fs.FileMode(0o644)
	switch info, err := os.Stat(target); {
	case err == nil && info.IsDir():
		return true, fmt.Errorf("it is a directory")
	case err == nil:
		existed, mode = true, info.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return existed, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".brood-*")
	if err != nil {
		return existed, err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		tmp.Close()
		return existed, err
	}
	if err = tmp.Chmod(mode); err != nil {
		tmp.Close()
		return existed, err
	}
	if err = tmp.Close(); err != nil {
		return existed, err
	}
	return existed, os.Rename(tmp.Name(), target)
}
