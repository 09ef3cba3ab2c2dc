// Package jsonstr rewrites the strings of an encoded JSON document in
// place: every string literal (keys included) is decoded, passed through a
// function and, when the function changed it, encoded again; everything
// else — layout, key order, numbers — is kept byte for byte.
//
// brood uses it to redact every message that leaves a process (a hook's
// payload, a stream-json line, an MCP reply, a child's protocol line): a
// secret is matched in the decoded text, however JSON escaped it.
package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Map returns b with fn applied to each string it holds. b is returned
// unchanged (the same slice) when fn changed nothing; a string literal that
// does not decode is left as it is.
func Map(b []byte, fn func(string) string) []byte {
	if fn == nil || bytes.IndexByte(b, '"') < 0 {
		return b
	}
	var out []byte // nil until the first change
	last := 0
	for i := 0; i < len(b); {
		if b[i] != '"' {
			i++
			continue
		}
		end, escaped := literalEnd(b, i)
		if end < 0 {
			break // an unterminated string: the rest is left as it is
		}
		lit := b[i:end]
		if repl, ok := mapLiteral(lit, escaped, fn); ok {
			if out == nil {
				out = make([]byte, 0, len(b)+64)
			}
			out = append(out, b[last:i]...)
			out = append(out, repl...)
			last = end
		}
		i = end
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// nested reports whether s is itself a JSON object or array.
func nested(s string) bool {
	t := strings.TrimSpace(s)
	return len(t) >= 2 && (t[0] == '{' || t[0] == '[') && strings.IndexByte(t, '"') >= 0 && json.Valid([]byte(t))
}

// literalEnd returns the index just past the string literal whose opening
// quote is at b[i] (-1 when it does not end), and whether it holds a
// backslash escape.
func literalEnd(b []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return -1, escaped
}

// mapLiteral applies fn to one literal (quotes included) and returns its
// new encoding, or false when fn left it as it was.
func mapLiteral(lit []byte, escaped bool, fn func(string) string) ([]byte, bool) {
	var s string
	if escaped {
		if json.Unmarshal(lit, &s) != nil {
			return nil, false
		}
	} else {
		s = string(lit[1 : len(lit)-1])
	}
	r := s
	if nested(s) {
		// A JSON document carried as a string (an MCP resource's text, a
		// tool input given as text): its own strings are escaped once more.
		r = string(Map([]byte(s), fn))
	}
	r = fn(r)
	if r == s {
		return nil, false
	}
	enc, err := json.Marshal(r)
	if err != nil {
		return nil, false
	}
	return enc, true
}
