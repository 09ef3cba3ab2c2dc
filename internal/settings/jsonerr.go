package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// JSONError is a JSON settings file's decoding error as one line naming
// file:line:col (1-based; the column in characters) and what to do.
// Claude Code's settings.json and brood's JSON files share it.
func JSONError(path string, data []byte, err error) error {
	var off int64 = -1
	var what string
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off, what = se.Offset, se.Error()
	case errors.As(err, &te):
		off = te.Offset
		what = fmt.Sprintf("%s is a JSON %s, it must be a %s", fieldName(te.Field), te.Value, jsonKind(te.Type.String()))
	default:
		what = err.Error()
	}
	if off < 0 {
		return fmt.Errorf("%s: %s (fix the file or move it aside)", path, what)
	}
	line, col := position(data, int(off))
	return fmt.Errorf("%s:%d:%d: %s (fix the file or move it aside)", path, line, col, what)
}

func fieldName(f string) string {
	if f == "" {
		return "the document"
	}
	return f
}

func jsonKind(goType string) string {
	switch goType {
	case "string":
		return "string"
	case "bool":
		return "boolean (true or false)"
	case "[]string":
		return "list of strings"
	}
	if len(goType) > 4 && goType[:4] == "map[" {
		return "JSON object"
	}
	if len(goType) > 2 && goType[:2] == "[]" {
		return "list"
	}
	return goType
}

// position is the 1-based line and column of the byte before offset (the
// decoder's offset is just past the offending byte).
func position(data []byte, off int) (line, col int) {
	if len(data) == 0 {
		return 1, 1
	}
	off = min(max(off, 1), len(data))
	before := data[:off-1]
	line = bytes.Count(before, []byte("\n")) + 1
	start := bytes.LastIndexByte(before, '\n') + 1
	col = utf8.RuneCount(before[start:]) + 1
	return line, col
}
