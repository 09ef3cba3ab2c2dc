package tool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/broodhq/brood/internal/model"
)

// Limits of one Read call. They keep a single call from flooding the
// model's context; offset and limit page through anything larger.
const (
	readDefaultLimit = 2000       // lines per call
	readMaxLineLen   = 2000       // characters kept of one line
	readMaxBytes     = 256 * 1024 // file size readable without a range, and output cap
)

// Read shows a text file with line numbers, as `cat -n` does.
type Read struct{}

type readInput struct {
	FilePath string `json:"file_path"`
	Offset   int    `json:"offset"`
	Limit    int    `json:"limit"`
}

func (*Read) Spec() model.ToolSpec {
	return spec("Read", readDescription, `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "description": "The path of the file to read (absolute, or relative to the workspace)"},
    "offset": {"type": "integer", "description": "The line number to start reading from (1-based). Only give it for files too large to read at once"},
    "limit": {"type": "integer", "description": "The number of lines to read. Only give it for files too large to read at once"}
  },
  "required": ["file_path"],
  "additionalProperties": false
}`)
}

func (*Read) ReadOnly() bool { return true }

func (*Read) Run(ctx context.Context, env *Env, input json.RawMessage) Result {
	var in readInput
	if r, ok := decode("Read", input, &in); !ok {
		return r
	}
	if strings.TrimSpace(in.FilePath) == "" {
		return Errorf("file_path is empty: give the path of the file to read")
	}
	if in.Offset < 0 || in.Limit < 0 {
		return Errorf("offset and limit must be positive (offset is a 1-based line number), got offset=%d limit=%d", in.Offset, in.Limit)
	}
	abs := env.abs(in.FilePath)
	info, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Errorf("file does not exist: %s. Use Glob or LS to find the right path", abs)
	case err != nil:
		return Errorf("cannot read %s: %v", abs, err)
	case info.IsDir():
		return Errorf("%s is a directory, not a file: use LS to list it, or Glob to find files in it", abs)
	case !info.Mode().IsRegular():
		return Errorf("%s is not a regular file (%s); Read shows only regular files", abs, info.Mode().Type())
	}
	ranged := in.Offset > 0 || in.Limit > 0
	if !ranged && info.Size() > readMaxBytes {
		return Errorf("%s is too large to read at once (%d bytes, more than %d); pass offset and limit to read part of it (e.g. offset=1, limit=500), or use Grep to find the lines you need", abs, info.Size(), readMaxBytes)
	}
	if binary, err := sniffFile(abs); err != nil {
		return Errorf("cannot read %s: %v", abs, err)
	} else if binary {
		return Errorf("%s is a binary file (%d bytes); Read shows text only. Use Bash (e.g. `file`, `xxd | head`) to inspect it", abs, info.Size())
	}
	if info.Size() == 0 {
		return Result{Content: fmt.Sprintf("(%s exists but is empty)", abs)}
	}
	f, err := os.Open(abs)
	if err != nil {
		return Errorf("cannot read %s: %v", abs, err)
	}
	defer f.Close()
	return readLines(ctx, bufio.NewReaderSize(f, readBufSize(info.Size())), abs, max(in.Offset, 1), in.Limit)
}

// readBufSize is a Read's buffer: the file's size, from 4 KiB to 64 KiB (a
// long line is read in pieces whatever the size).
func readBufSize(size int64) int {
	return int(min(max(size+1, 4<<10), 64<<10))
}

// readLines formats lines [offset, offset+limit) of r, cutting long lines
// and stopping at the output cap, and says how to read on.
func readLines(ctx context.Context, br *bufio.Reader, abs string, offset, limit int) Result {
	if limit <= 0 {
		limit = readDefaultLimit
	}
	var out strings.Builder
	line, shown, cutLines := 0, 0, 0
	more := false
	for {
		text, long, err := readLine(br)
		if err == io.EOF && text == "" && !long {
			break
		}
		line++
		if line%4096 == 0 && ctx.Err() != nil {
			return Errorf("Read of %s cancelled", abs)
		}
		if line >= offset {
			if shown == limit || out.Len() > readMaxBytes {
				more = true
				break
			}
			if long {
				cutLines++
				text += fmt.Sprintf("... [line cut at %d characters]", readMaxLineLen)
			}
			fmt.Fprintf(&out, "%6d\t%s\n", line, text)
			shown++
		}
		if err != nil {
			break
		}
	}
	if shown == 0 {
		return Errorf("%s has %d lines; offset %d is past the end", abs, line, offset)
	}
	last := offset + shown - 1
	if more {
		fmt.Fprintf(&out, "\n(showing lines %d-%d; the file continues: call Read with offset=%d to read on)", offset, last, last+1)
	}
	if cutLines > 0 {
		fmt.Fprintf(&out, "\n(%d long lines were cut at %d characters; use Grep or Bash to see them whole)", cutLines, readMaxLineLen)
	}
	return Result{Content: out.String()}
}

// readLine reads one line without its newline, keeping at most
// readMaxLineLen characters (never splitting a UTF-8 sequence) and
// discarding the rest; long reports the cut. Memory stays bounded however
// long the line is.
func readLine(br *bufio.Reader) (text string, long bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf) < readMaxLineLen*utf8.UTFMax {
			buf = append(buf, chunk[:min(len(chunk), readMaxLineLen*utf8.UTFMax-len(buf))]...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		s := strings.TrimSuffix(strings.TrimSuffix(string(buf), "\n"), "\r")
		if err == nil || err == io.EOF {
			s, long = cutRunes(s, readMaxLineLen)
			if err == io.EOF && s == "" && len(buf) == 0 {
				return "", false, io.EOF
			}
			if err == nil {
				return s, long, nil
			}
			return s, long, io.EOF
		}
		return s, false, err
	}
}

// cutRunes keeps the first n characters of s.
func cutRunes(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k], true
		}
		i++
	}
	return s, false
}
