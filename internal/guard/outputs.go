package guard

import (
	"os"
	"path/filepath"
	"strings"
)

// Files a test line writes that are no change to the tree (evidence3): a
// profile or log written outside the workspace (`go test
// -coverprofile=/tmp/c.out`, `| tee /tmp/test.log`), and a test log
// named so in it (`| tee test.log`, `> log`). The path must be written
// out (no $VAR, ~ or glob) and, outside, resolve outside the workspace
// when the parent judges (a link into it the child left is seen; one it
// removed again is not: docs/lifecycle.md).

// outsideTree reports an absolute path that is outside the workspace,
// as written and with its links resolved.
func (in Input) outsideTree(p string) bool {
	p = strings.Trim(p, `'"`)
	if p == "" || in.Workspace == "" || !filepath.IsAbs(p) || strings.ContainsAny(p, "$`~*?[{") {
		return false
	}
	ws := []string{filepath.Clean(in.Workspace)}
	if r, err := filepath.EvalSymlinks(in.Workspace); err == nil {
		ws = append(ws, r)
	}
	paths := []string{filepath.Clean(p)}
	if r, ok := resolveExisting(filepath.Clean(p)); ok {
		paths = append(paths, r)
	} else {
		return false
	}
	for _, w := range ws {
		for _, q := range paths {
			if rel, err := filepath.Rel(w, q); err != nil || rel == "." || !strings.HasPrefix(rel, "..") {
				return false
			}
		}
	}
	return true
}

// resolveExisting is p with the links of its longest existing prefix
// resolved (a dangling link: not ok).
func resolveExisting(p string) (string, bool) {
	rest := ""
	for d := p; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			r, err := filepath.EvalSymlinks(d)
			if err != nil {
				return "", false
			}
			return filepath.Join(r, rest), true
		}
		if d == filepath.Dir(d) {
			return p, true
		}
		rest = filepath.Join(filepath.Base(d), rest)
	}
}

// logOutput reports a file a tee or redirection writes that is no change
// to the tree: outside it, or, in a line that runs a test (testLine), a
// log by its name (test.log, log) written out and not under a testdata
// or fixtures directory (echo broken > testdata/in.log is a change: tests
// may read it).
func (in Input) logOutput(p string, testLine bool) bool {
	p = strings.Trim(p, `'"`)
	if p == "" || strings.ContainsAny(p, "$`~*?[{") {
		return false
	}
	if in.outsideTree(p) {
		return true
	}
	base := filepath.Base(p)
	for _, d := range strings.Split(filepath.ToSlash(filepath.Dir(filepath.Clean(p))), "/") {
		if d == "testdata" || d == "fixtures" || d == "__fixtures__" || d == ".." {
			return false
		}
	}
	return testLine && (base == "log" || strings.HasSuffix(base, ".log") && base != ".log")
}

// logWrites reports a segment that writes only logs (logOutput, testLine
// whether its line runs a test): a tee
// to such files (or to none), or a redirection into one.
func (in Input) logWrites(s Segment, testLine bool) bool {
	if s.Writes {
		t := strings.TrimLeft(strings.TrimSpace(s.Source), "0123456789&>|")
		return in.logOutput(strings.TrimSpace(t), testLine)
	}
	f := strings.Fields(s.Words)
	if len(f) < 2 || f[0] != "tee" {
		return false
	}
	for _, w := range f[1:] {
		if !strings.HasPrefix(w, "-") && !in.logOutput(w, testLine) {
			return false
		}
	}
	return true // (a tee of no file writes none)
}
