package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/broodhq/brood/internal/model"
)

// Edit replaces an exact piece of text in a file.
type Edit struct{}

type editInput struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

func (*Edit) Spec() model.ToolSpec {
	return spec("Edit", editDescription, `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The path of the file to modify (absolute, or relative to the workspace)"},
    "old_string": {"type": "string", "description": "The text to replace"},
    "new_string": {"type": "string", "description": "The text to replace it with (must differ from old_string)"},
    "replace_all": {"type": "boolean", "default": false, "description": "Replace every occurrence of old_string (default false)"}
  },
  "required": ["file_path", "old_string", "new_string"],
  "additionalProperties": false
}`)
}

func (*Edit) ReadOnly() bool { return false }

func (*Edit) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var in editInput
	if r, ok := decode("Edit", input, &in); !ok {
		return r
	}
	if strings.TrimSpace(in.FilePath) == "" {
		return Errorf("file_path is empty: give the path of the file to edit")
	}
	if in.OldString == in.NewString {
		return Errorf("old_string and new_string are the same, so the edit would change nothing; give the new text in new_string")
	}
	abs := env.abs(in.FilePath)
	data, err := os.ReadFile(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist) && in.OldString == "":
		return writeEdited(abs, in.NewString, "Created "+abs)
	case errors.Is(err, fs.ErrNotExist):
		return Errorf("file does not exist: %s. Check the path with Glob or LS; to create a new file use Write", abs)
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "directory") {
			return Errorf("%s is a directory; Edit changes files", abs)
		}
		return Errorf("cannot read %s: %v", abs, err)
	}
	content := string(data)
	if in.OldString == "" {
		if content != "" {
			return Errorf("old_string is empty but %s is not: give the exact text to replace, or use Write to replace the whole file", abs)
		}
		return writeEdited(abs, in.NewString, "Wrote "+abs)
	}
	if isBinary(data) {
		return Errorf("%s is a binary file; Edit changes text files only", abs)
	}
	oldS, newS := in.OldString, in.NewString
	crlf := strings.Contains(content, "\r\n")
	if !strings.Contains(content, oldS) && crlf && !strings.Contains(oldS, "\r") {
		// The model sees lines, not line endings: match a CRLF file too.
		oldS = strings.ReplaceAll(oldS, "\n", "\r\n")
	}
	if crlf && !strings.Contains(newS, "\r") {
		// And keep the file's line endings in what it inserts.
		newS = strings.ReplaceAll(newS, "\n", "\r\n")
	}
	n := strings.Count(content, oldS)
	switch {
	case n == 0:
		msg := fmt.Sprintf("old_string was not found in %s", abs)
		if line := fuzzyLine(content, in.OldString); line > 0 {
			msg += fmt.Sprintf(". It does match at line %d if whitespace is ignored: Read the file there and copy the text exactly, with its indentation (tabs vs spaces) and line breaks", line)
		} else {
			msg += ". Read the file again and copy the text to replace exactly (without the line number prefix Read adds)"
		}
		return Errorf("%s", msg)
	case n > 1 && !in.ReplaceAll:
		return Errorf("old_string occurs %d times in %s (lines %s); add surrounding context to make it unique, or set replace_all to true to replace all of them", n, abs, joinInts(matchLines(content, oldS)))
	}
	first := strings.Index(content, oldS)
	var updated string
	if in.ReplaceAll {
		updated = strings.ReplaceAll(content, oldS, newS)
	} else {
		updated = content[:first] + newS + content[first+len(oldS):]
	}
	line := strings.Count(content[:first], "\n") + 1
	what := fmt.Sprintf("Edited %s: replaced %d occurrence", abs, n)
	if n > 1 {
		what += "s"
	}
	r := writeEdited(abs, updated, what)
	if r.IsError {
		return r
	}
	r.Content += fmt.Sprintf(". The changed region now reads:\n%s", snippet(updated, line, countLines(newS)))
	return r
}

func writeEdited(abs, content, what string) Result {
	if _, err := writeFileAtomic(abs, []byte(content)); err != nil {
		return Errorf("cannot write %s: %v", abs, err)
	}
	return Result{Content: what}
}

// matchLines returns the line numbers at which each occurrence of sub starts.
func matchLines(content, sub string) []int {
	var lines []int
	line, pos := 1, 0
	for {
		i := strings.Index(content[pos:], sub)
		if i < 0 {
			return lines
		}
		line += strings.Count(content[pos:pos+i], "\n")
		lines = append(lines, line)
		line += strings.Count(sub, "\n")
		pos += i + len(sub)
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	if len(s) > 20 {
		return strings.Join(s[:20], ", ") + ", ..."
	}
	return strings.Join(s, ", ")
}

// fuzzyLine looks for sub in content with every run of whitespace ignored
// and returns the line where it starts, or 0. It finds the usual reason an
// exact match fails: tabs for spaces, changed indentation, a wrapped line.
func fuzzyLine(content, sub string) int {
	ns, _ := squeeze(sub)
	if ns == "" {
		return 0
	}
	nc, pos := squeeze(content)
	i := strings.Index(nc, ns)
	if i < 0 {
		return 0
	}
	return strings.Count(content[:pos[i]], "\n") + 1
}

// squeeze drops all whitespace from s; pos maps each kept byte to its
// offset in s.
func squeeze(s string) (string, []int) {
	var b strings.Builder
	var pos []int
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			b.WriteString(s[i : i+size])
			for k := range size {
				pos = append(pos, i+k)
			}
		}
		i += size
	}
	return b.String(), pos
}

// snippet shows lines around an edit, numbered like Read, so the model can
// check the result without another call.
func snippet(content string, line, n int) string {
	lines := strings.Split(strings.TrimSuffix(content, "\n"), "\n")
	from := max(line-3, 1)
	to := min(line+max(n, 1)+2, len(lines))
	if to-from > 40 {
		to = from + 40
	}
	var b strings.Builder
	for i := from; i <= to; i++ {
		text, _ := cutRunes(lines[i-1], readMaxLineLen)
		fmt.Fprintf(&b, "%6d\t%s\n", i, strings.TrimSuffix(text, "\r"))
	}
	return strings.TrimSuffix(b.String(), "\n")
}
