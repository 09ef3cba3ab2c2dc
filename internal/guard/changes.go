package guard

import (
	"path/filepath"
	"slices"
	"strings"
)

// A change to the child's files (redteam20 P2-1): a file tool's edit
// that went through, and any Bash call that ran and may have written a
// file. `Edit` (fix), `go test` (pass), `sed -i` (unfix) ends with a
// change no test ran after. A Bash call is known to write nothing only
// when each of its commands is read-only as brood's permissions judge
// them (Input.ReadOnly: git status/diff/log, ls, cat, grep, ... with no
// option that writes and no redirection into a file), a test command, or
// one of quietCommands; anything else, or a line that does not parse, is
// a change: a false "no test ran after its last change" is the safe side
// (the parent says what to do), a false pass is not.

// Segment is one simple command of a Bash line, or a redirection of it
// that writes a file, in the line's order (trust.LineCommands).
type Segment struct {
	Words      string // its words from its program on, joined ("" a redirection)
	Source     string // as the line writes it
	Writes     bool   // a redirection into a file
	Background bool   // it runs in the background
	Hidden     bool   // its output does not reach the line's (a file, /dev/null, $(...))
	Pipe       []string
	Detaches   bool // nohup, setsid or disown in command position
}

// quietCommands write no file without a redirection, and are not in the
// permissions' read-only set (they need no rule there for other reasons,
// or are go's read-only subcommands): a prefix of a command's words.
func quietCommands() []string {
	return []string{"echo", "printf", "true", "false", ":", "sleep", "date", "test", "[", "exit", "set", "cd", "pushd", "popd",
		"pwd", "export", "go vet", "go list", "go version", "go doc", "gofmt -l", "gofmt -d", "go env"}
}

// writingOption reports an option that makes a quiet command or go build
// write or run a program: -w, -vettool, -toolexec, -exec, -overlay, -o,
// -fix (go vet -fix rewrites the code), -modfile and -mod=mod (go.mod,
// go.sum).
func writingOption(w string) bool {
	if !strings.HasPrefix(w, "-") {
		return false
	}
	opt, value, _ := strings.Cut(strings.TrimLeft(w, "-"), "=")
	switch opt {
	case "w", "vettool", "toolexec", "exec", "overlay", "o", "fix", "modfile":
		return true
	case "mod":
		return value != "readonly" && value != "vendor"
	}
	return false
}

// quiet reports a command of quietCommands without an option that makes
// it write (writingOption: gofmt -w, go vet -vettool, go vet -fix; printf
// -v is a variable). git is not among them: gitKeepsFiles judges its
// global and output options first (git --no-pager diff --output=a.go).
func quiet(words string) bool {
	f := strings.Fields(words)
	if len(f) == 0 {
		return true
	}
	for _, q := range quietCommands() {
		if words != q && !strings.HasPrefix(words, q+" ") {
			continue
		}
		return !slices.ContainsFunc(f[1:], writingOption) && (q != "go env" || !slices.Contains(f[2:], "-u"))
	}
	return false
}

// bashChange says whether a Bash call may have changed a file, and
// whether it may have done so after the test it runs (a write written
// after its last test command, or one run in the background).
func (in Input) bashChange(c Call) (change, afterTest bool) {
	if c.Command == "" || (c.IsError && in.wasRefused(c)) {
		return false, false
	}
	if in.ReadOnly != nil && in.ReadOnly(c.Command) {
		return false, false
	}
	if in.Commands == nil {
		return !isTest(in, c.Command), false
	}
	segs, ok := in.Commands(c.Command)
	if !ok {
		return true, true
	}
	lastTest := -1
	for i, s := range segs {
		if !s.Writes && !s.Background && testPrefix(in, s.Words) {
			lastTest = i
		}
	}
	for i, s := range segs {
		if !in.writes(s, lastTest >= 0) {
			continue
		}
		change = true
		if lastTest >= 0 && (i > lastTest || s.Background) {
			afterTest = true
		}
	}
	return change, afterTest
}

// writes reports a segment that may write a file (testLine: its line runs
// a test, whose log it may write).
func (in Input) writes(s Segment, testLine bool) bool {
	switch {
	case in.logWrites(s, testLine):
		return false
	case s.Writes:
		return true
	case testPrefix(in, s.Words):
		return false
	case !harmlessEnv(s.Source):
		return in.ReadOnly == nil || !in.ReadOnly(s.Source)
	case quiet(s.Words) || goBuild(s.Words) || sedPrints(s.Source):
		return false
	case gitKeepsFiles(s.Words) != "":
		return gitKeepsFiles(s.Words) == "commit" && gitHooks(in)
	case in.ReadOnly != nil && s.Source != "":
		return !in.ReadOnly(s.Source)
	}
	return true
}

// lastChange is the index of the child's last change to a file (-1
// none), and whether that call changed it after the test it ran itself.
func (in Input) lastChange() (int, bool) {
	last, after := -1, false
	for i, c := range in.Calls {
		switch c.Tool {
		case "Write", "Edit", "MultiEdit", "NotebookEdit":
			if !c.IsError {
				last, after = i, false
			}
		case "Bash":
			if ch, a := in.bashChange(c); ch {
				last, after = i, a
			}
		}
	}
	return last, after
}

// gitKeepsFiles is the subcommand of a git command whose subcommand records or reads
// history and leaves the work tree's files as they are (git add, git
// commit, git tag, git branch, ...): the tests' verdict on those files
// still holds. Its only global options are --no-pager, -P and -C DIR (-c
// and the like can name programs git runs). git stash, checkout,
// restore, switch, apply, reset, pull, merge, rebase, cherry-pick, revert
// and every other subcommand write files: a change. git branch never
// checks a branch out; git commit runs the repository's hooks (gitHooks).
func gitKeepsFiles(words string) string {
	f := strings.Fields(words)
	if len(f) < 2 || f[0] != "git" {
		return ""
	}
	i := 1
	for i < len(f) {
		switch f[i] {
		case "--no-pager", "-P":
			i++
			continue
		case "-C":
			i += 2
			continue
		}
		break
	}
	if i >= len(f) {
		return ""
	}
	switch f[i] {
	case "add", "commit", "tag", "branch", "notes", "log", "status", "diff", "show", "rev-parse", "ls-files", "ls-tree",
		"describe", "shortlog", "rev-list", "cat-file", "show-ref", "for-each-ref", "merge-base", "name-rev", "blame":
		// an option that writes a file (git diff --output=F) or runs a
		// program (--ext-diff, --textconv): tool's checks judge those.
		if slices.ContainsFunc(f[i+1:], func(w string) bool {
			opt, _, _ := strings.Cut(w, "=")
			return slices.Contains([]string{"--output", "--ext-diff", "--textconv", "--output-directory", "-o"}, opt)
		}) {
			return ""
		}
		return f[i]
	}
	return ""
}

// gitHooks reports that a git commit may still write: it runs hooks
// (pre-commit, post-commit, ...), which a call of the child could have
// written or pointed git at (.git/hooks/..., core.hooksPath): any call
// naming hooks makes a git commit a change.
func gitHooks(in Input) bool {
	return slices.ContainsFunc(in.Calls, func(c Call) bool {
		return strings.Contains(strings.ToLower(c.Command+" "+c.Path), "hooks")
	})
}

// goBuild reports a go build whose output is a binary, not code a test
// ran (go build ./..., go build -o bin/x): not a change. An -o naming a
// source file (.go, .s, .c, .h, go.mod, go.sum), -toolexec or -overlay
// keep it one; go generate and go mod are changes.
func goBuild(words string) bool {
	f := strings.Fields(words)
	if len(f) < 2 || f[0] != "go" || f[1] != "build" {
		return false
	}
	for j, w := range f[2:] {
		opt, value, has := strings.Cut(strings.TrimLeft(w, "-"), "=")
		if !strings.HasPrefix(w, "-") {
			continue
		}
		if opt != "o" && writingOption(w) {
			return false
		}
		if opt != "o" {
			continue
		}
		if !has && j+3 < len(f) {
			value = f[j+3]
		}
		base := filepath.Base(strings.Trim(value, `'"`))
		if base == "go.mod" || base == "go.sum" || slices.Contains([]string{".go", ".s", ".c", ".h"}, filepath.Ext(base)) {
			return false
		}
	}
	return true
}

// startedJob is the first Bash call up to index upto that started a job
// that may outlive it (-1 none): a command run in the background (`&`,
// coproc) or through nohup, setsid or disown in command position (not as
// an argument: grep setsid notes.txt starts nothing). The Bash tool keeps such a
// job alive, so it may write after any later test (review #6); a
// refused call started nothing.
func (in Input) startedJob(upto int) int {
	if in.Commands == nil {
		return -1
	}
	for i, c := range in.Calls[:min(upto+1, len(in.Calls))] {
		if c.Tool != "Bash" || c.Command == "" || (c.IsError && in.wasRefused(c)) {
			continue
		}
		segs, _ := in.Commands(c.Command)
		if slices.ContainsFunc(segs, func(s Segment) bool { return s.Background || s.Detaches }) {
			return i
		}
	}
	return -1
}
