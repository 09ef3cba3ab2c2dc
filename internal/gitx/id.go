package gitx

import (
	"fmt"
	"strings"
)

// IsObjectID reports whether s is a full object id: 40 (SHA-1) or 64
// (SHA-256) lowercase hex digits. Only such a string is taken from a
// submitter or a repository where git expects a revision: nothing else
// (an option, a range, a reflog expression, a path) can pass.
func IsObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ObjectID checks that the value of field is a full object id, in a
// one-line error naming the field and what it holds.
func ObjectID(field, s string) error {
	if IsObjectID(s) {
		return nil
	}
	return fmt.Errorf("%s %q is not a full git object id (40 or 64 lowercase hex digits)", field, clip(s))
}

// BranchName checks a branch name from a submitter: what `git
// check-ref-format --branch` accepts, in a stricter form that needs no
// git call (no leading "-" or ".", no "..", "@{", "//", control
// characters, spaces, ~^:?*[\, no trailing "/", ".", ".lock").
func BranchName(field, s string) error {
	bad := s == "" || s == "@" || len(s) > 255 ||
		strings.HasPrefix(s, "-") || strings.HasPrefix(s, ".") || strings.HasPrefix(s, "/") ||
		strings.HasSuffix(s, "/") || strings.HasSuffix(s, ".") || strings.HasSuffix(s, ".lock") ||
		strings.Contains(s, "..") || strings.Contains(s, "@{") || strings.Contains(s, "//") || strings.Contains(s, "/.") ||
		strings.ContainsAny(s, " ~^:?*[\\\x7f")
	for _, r := range s {
		if r < 0x20 {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("%s %q is not a branch name git accepts", field, clip(s))
	}
	return nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
