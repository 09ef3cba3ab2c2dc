package guard

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/broodhq/brood/internal/textline"
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
)

func evidence(in Input) []Concern {
	if in.Status != "done" {
		return nil
	}
	var out []Concern
	claimsTests, claimedEdits := claims(in.Summary)
	if claimsTests {
		if why := testEvidence(in); why != "" {
			out = append(out, Concern{KindEvidence, "the report says tests pass, but " + why})
		}
	}
	for _, f := range claimedEdits {
		if !touched(in, f) {
			out = append(out, Concern{KindEvidence, fmt.Sprintf("the report says it changed %s, but no edit touched it", f)})
		}
	}
	if in.CallsKnown && len(in.Calls) == 0 && !in.Fork {
		if what := reported(in, claimsTests, claimedEdits); what != "" {
			out = append(out, Concern{KindEvidence, "the child made no tool call at all, yet its report gives " + what + ": nothing it did backs them"})
		}
	}
	return out
}

// reported names what a report gives that needs work behind it: findings,
// changes or passing tests ("" when it gives none of them).
func reported(in Input, tests bool, edits []string) string {
	var what []string
	if s := sectionText(in.Summary, "What I found"); s != "" {
		what = append(what, "findings")
	}
	if len(edits) > 0 || len(in.Claimed) > 0 || sectionText(in.Summary, "Files changed") != "" {
		what = append(what, "changes")
	}
	if tests {
		what = append(what, "passing tests")
	}
	return strings.Join(what, " and ")
}

// sectionText is what the report says under section, "" when the section
// is missing or says nothing ("none", "nothing", "n/a", "no changes").
func sectionText(summary, section string) string {
	lines := strings.Split(summary, "\n")
	for i, line := range lines {
		if !hasHeading(line, section) {
			continue
		}
		var b strings.Builder
		// A bold heading may carry its text on the same line.
		if _, rest, ok := strings.Cut(line, ":"); ok && strings.Contains(line, "**") {
			b.WriteString(strings.Trim(rest, "* \t"))
		}
		for _, l := range lines[i+1:] {
			t := strings.TrimSpace(l)
			if strings.HasPrefix(t, "#") || (strings.HasPrefix(t, "**") && strings.Contains(t, ":**")) {
				break
			}
			b.WriteString(" " + t)
		}
		return substantive(b.String())
	}
	return ""
}

func substantive(s string) string {
	t := strings.ToLower(strings.Trim(strings.TrimSpace(s), "-*._`()"))
	for _, empty := range []string{"none", "nothing", "n/a", "no ", "not applicable"} {
		if t == strings.TrimSpace(empty) || strings.HasPrefix(t, empty) {
			return ""
		}
	}
	return strings.TrimSpace(s)
}

// testEvidence says why the calls do not back a tests-pass claim ("" when
// they do): evidence is a test command that ran and exited 0 after the
// child's last change to a file (the last such command, when there are
// several: a later failure is not backed by an earlier pass; a change is
// an edit or a Bash call that may have written: changes.go), and left out
// nothing that failed earlier in the task (leftout.go).
func testEvidence(in Input) string {
	lastChange, afterItsTest := in.lastChange()
	ranBefore := false
	var last *Call
	lastAt := -1
	for i := range in.Calls {
		c := &in.Calls[i]
		if c.Tool != "Bash" || !isTest(in, c.Command) {
			continue
		}
		if i < lastChange || (i == lastChange && afterItsTest) {
			ranBefore = true
			continue
		}
		last, lastAt = c, i
	}
	switch {
	case last != nil && !last.IsError && !statusIsTests(in, last.Command):
		return fmt.Sprintf("its last test command %q exited 0 as a whole, but the line's status is not the test's own (a pipeline's is its last command's, a list's its last's, `||` hides a failure): its test result is unknown; run the tests alone or joined with &&", textline.Line(last.Command, 160))
	case last != nil && !last.IsError:
		if j := in.startedJob(lastAt); j >= 0 {
			return fmt.Sprintf("%s started a job that may still run (&, nohup, setsid, disown) and write after its last test command %q: a task that leaves a job running has no test evidence; run the tests without leaving jobs running", describe(in.Calls[j]), textline.Line(last.Command, 160))
		}
		if why := fakedPass(in, *last); why != "" {
			return fmt.Sprintf("its last test command %q exited 0, but %s: that is no evidence that tests pass", textline.Line(last.Command, 160), why)
		}
		if why := leftOut(in, lastAt); why != "" {
			return fmt.Sprintf("its last test command %q exited 0, but %s: a pass of the rest is no evidence that tests pass (run them all, or say in the report which ran)", textline.Line(last.Command, 160), why)
		}
		return ""
	case last != nil && in.wasRefused(*last):
		return fmt.Sprintf("its test command %q was refused (%s): it never ran", textline.Line(last.Command, 160), textline.Line(last.Result, 160))
	case last != nil:
		return fmt.Sprintf("its last test command %q failed (%s)", textline.Line(last.Command, 160), lastLine(last.Result, 160))
	case ranBefore && in.Calls[lastChange].Tool == "Bash":
		return fmt.Sprintf("no test command ran after its last change (%s), which may have written a file: run the tests again after it", describe(in.Calls[lastChange]))
	case ranBefore:
		return fmt.Sprintf("no test command ran after its last change (%s)", describe(in.Calls[lastChange]))
	}
	return "the child ran no test command"
}

func lastLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return textline.Line(s, n)
}

// claims reads the report's sentences for a tests-pass claim and the files
// it says it changed. A sentence is put to the regexps only when a cheap
// scan (mayClaim) finds what any match of them needs: most of a report
// (headings, findings, plain prose) never reaches them.
func claims(summary string) (bool, []string) {
	tests := false
	var files []string
	seen := map[string]bool{}
	for _, s := range sentences(summary) {
		mayTests, mayEdit := mayClaim(s)
		if !mayTests && !mayEdit {
			continue // neither regexp can match: nothing to negate either
		}
		if negation().MatchString(s) {
			continue
		}
		if mayTests && testsPass().MatchString(s) {
			tests = true
		}
		if !mayEdit {
			continue
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

// mayClaim says whether testsPass (tests) and editedFile (edit) could
// match sentence s: false only when a word every match needs is missing.
// A match of testsPass holds "test" or "spec" and one of "pass", "green",
// "succeed", "ok"; one of editedFile holds one of its verbs and a '.'
// (the file's extension). The regexps fold case the Unicode way: "k" and
// "s" also match the Kelvin sign and the long s, so a sentence with
// either goes to them whatever the scan says.
func mayClaim(s string) (tests, edit bool) {
	if strings.ContainsAny(s, "\u212a\u017f") {
		return true, true
	}
	tests = (hasWord(s, "test") || hasWord(s, "spec")) &&
		(hasWord(s, "pass") || hasWord(s, "green") || hasWord(s, "succeed") || hasWord(s, "ok"))
	if !tests && strings.IndexByte(s, '.') < 0 {
		return false, false
	}
	// "wrote" stands for "rewrote" too.
	for _, v := range [...]string{"edited", "modified", "updated", "changed", "created", "wrote", "added", "fixed", "patched"} {
		if hasWord(s, v) {
			return tests, strings.IndexByte(s, '.') >= 0
		}
	}
	return tests, false
}

// hasWord reports whether s holds w (lower-case ASCII letters) in any
// ASCII case. b|0x20 equals a lower-case letter only for that letter and
// its upper case: no other byte, and none of a multi-byte sequence.
func hasWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		j := 0
		for j < len(w) && s[i+j]|0x20 == w[j] {
			j++
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// sentences splits text as the regexp `[.!?]\s+|\n+` does (Split with
// n = -1): at a '.', '!' or '?' followed by whitespace (\s: tab, newline,
// form feed, carriage return, space), the run of whitespace dropped, and
// at every run of newlines. The delimiters are ASCII, so bytes will do:
// no byte of a multi-byte UTF-8 sequence is one.
func sentences(text string) []string {
	var out []string
	beg := 0
	for i := 0; i < len(text); {
		j := i
		switch c := text[i]; {
		case (c == '.' || c == '!' || c == '?') && i+1 < len(text) && isSpace(text[i+1]):
			for j = i + 1; j < len(text) && isSpace(text[j]); j++ {
			}
		case c == '\n':
			for j = i; j < len(text) && text[j] == '\n'; j++ {
			}
		default:
			i++
			continue
		}
		out = append(out, text[beg:i])
		beg, i = j, j
	}
	return append(out, text[beg:])
}

// isSpace is RE2's \s.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// statusIsTests reports whether a Bash command line's exit status 0 proves
// that a test command in it passed.
func statusIsTests(in Input, command string) bool {
	if in.StatusCommands == nil {
		return true
	}
	for _, c := range in.StatusCommands(command) {
		if testPrefix(in, c) {
			return true
		}
	}
	return false
}

// testPrefix reports whether one simple command (its words joined) is a
// test command.
func testPrefix(in Input, p string) bool {
	cmds := in.TestCommands
	if cmds == nil {
		cmds = DefaultTestCommands()
	}
	forms := []string{p}
	if strings.HasPrefix(p, "make ") {
		forms = append(forms, makeTargets(p))
	}
	for _, t := range cmds {
		for _, f := range forms {
			if f == t || strings.HasPrefix(f, t+" ") {
				return true
			}
		}
	}
	return false
}

// makeTargets is a make command with its options and variable
// assignments left out ("make -j4 test" is "make test"): its targets.
func makeTargets(p string) string {
	words := strings.Fields(p)
	out := words[:1:1]
	for j := 1; j < len(words); j++ {
		w := words[j]
		switch {
		case strings.HasPrefix(w, "--"):
		case strings.HasPrefix(w, "-"):
			k := strings.IndexAny(w[1:], makeValued)
			if k >= 0 && k == len(w)-2 && j+1 < len(words) && (!strings.ContainsRune("jl", rune(w[len(w)-1])) || isDigits(words[j+1])) {
				j++ // -C dir, -j 4: the value is the next word (-j's only when a number)
			}
		case strings.Contains(w, "="):
		default:
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// isTest reports whether a Bash command line runs tests.
func isTest(in Input, command string) bool {
	if command == "" {
		return false
	}
	progs := []string{strings.Join(strings.Fields(command), " ")}
	if in.Programs != nil {
		progs = append(progs, in.Programs(command)...)
	}
	if in.StatusCommands != nil {
		// whole simple commands: python3 -m pytest after a cd or an
		// assignment (Programs keeps only python3)
		progs = append(progs, in.StatusCommands(command)...)
	}
	for _, p := range progs {
		if testPrefix(in, p) {
			return true
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

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789.") == ""
}
