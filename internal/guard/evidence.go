package guard

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// The claims the evidence guard looks for (documented in docs/lifecycle.md,
// "Edge guardrails"). Each is matched per sentence of the report; a
// sentence that negates ("not", "n't", "fail", "unable") is no claim.
// They are compiled on first use: a child that never judges a grandchild
// pays nothing for them at start-up.
var (
	// testsPass: "tests pass", "all 12 tests passed", "the test suite is
	// green", "go test ./... succeeds".
	testsPass = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(tests?|test suite|specs?|go test|npm test|pytest|cargo test)\b[^.\n]{0,60}?\b(pass(es|ed|ing)?|green|succeed(s|ed)?|ok)\b`)
	})
	// editedFile: "edited foo.go", "updated `src/a.ts`", "created docs/x.md".
	editedFile = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("(?i)\\b(edited|modified|updated|changed|created|wrote|rewrote|added|fixed|patched)\\s+(?:the\\s+file\\s+)?`?([\\w./-]+\\.[A-Za-z0-9]{1,8})`?")
	})
	negation = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(not|n't|never|fail(s|ed|ing)?|unable|could ?not|cannot)\b`)
	})
	sentenceEnd = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[.!?]\s+|\n+`) })
)

func evidence(in Input) []Concern {
	if in.Status != "done" {
		return nil
	}
	var out []Concern
	claimsTests, claimedEdits := claims(in.Summary)
	if claimsTests && !ranTests(in) {
		out = append(out, Concern{KindEvidence, "the report says tests pass, but the child ran no test command"})
	}
	for _, f := range claimedEdits {
		if !touched(in, f) {
			out = append(out, Concern{KindEvidence, fmt.Sprintf("the report says it changed %s, but no edit touched it", f)})
		}
	}
	return out
}

// claims reads the report's sentences for a tests-pass claim and the files
// it says it changed.
func claims(summary string) (bool, []string) {
	tests := false
	var files []string
	seen := map[string]bool{}
	for _, s := range sentences(summary) {
		if negation().MatchString(s) {
			continue
		}
		if testsPass().MatchString(s) {
			tests = true
		}
		for _, m := range editedFile().FindAllStringSubmatch(s, -1) {
			if f := strings.Trim(m[2], "./"); f != "" && !seen[f] && !strings.Contains(f, "://") {
				seen[f] = true
				files = append(files, m[2])
			}
		}
	}
	return tests, files
}

func sentences(text string) []string {
	return sentenceEnd().Split(text, -1)
}

func ranTests(in Input) bool {
	cmds := in.TestCommands
	if cmds == nil {
		cmds = DefaultTestCommands()
	}
	for _, c := range in.Calls {
		if c.Command == "" {
			continue
		}
		progs := []string{strings.Join(strings.Fields(c.Command), " ")}
		if in.Programs != nil {
			progs = append(progs, in.Programs(c.Command)...)
		}
		for _, p := range progs {
			for _, t := range cmds {
				if p == t || strings.HasPrefix(p, t+" ") {
					return true
				}
			}
		}
	}
	return false
}

// touched reports whether the claimed file is among the changed files or
// was the target of an edit (or a Bash line that names it).
func touched(in Input, claimed string) bool {
	want := filepath.ToSlash(filepath.Clean(claimed))
	match := func(p string) bool {
		p = filepath.ToSlash(filepath.Clean(p))
		if in.Workspace != "" && filepath.IsAbs(p) {
			if rel, err := filepath.Rel(in.Workspace, p); err == nil {
				p = filepath.ToSlash(rel)
			}
		}
		return p == want || strings.HasSuffix(p, "/"+want) || strings.HasSuffix(want, "/"+p)
	}
	for _, f := range in.Changed {
		if match(f) {
			return true
		}
	}
	for _, c := range in.Calls {
		switch c.Tool {
		case "Write", "Edit", "MultiEdit", "NotebookEdit":
			if !c.IsError && match(c.Path) {
				return true
			}
		case "Bash":
			if !c.IsError && strings.Contains(c.Command, filepath.Base(want)) {
				return true
			}
		}
	}
	return false
}
