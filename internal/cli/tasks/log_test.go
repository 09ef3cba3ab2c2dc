package tasks_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
	"github.com/broodhq/brood/internal/session"
)

// TestTasksLog prints the child's transcript readably (and raw with --json).
func TestTasksLog(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	id := p.DispatchOK("scout", "what is in the README?")
	code, out, errOut := p.Brood("tasks", "log", id)
	if code != 0 {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	ts := `\d\d:\d\d:\d\d`
	want := []string{
		ts + ` ═══ run of scout on script:` + regexp.QuoteMeta(filepath.Join(p.Root, ".brood", "script.yaml")),
		ts + ` user: Begin: what is in the README\?`,
		ts + ` assistant: Reading the README\.`,
		ts + ` assistant → Read \{"file_path":"README\.md"\}`,
		ts + `   ✓ Read: 1\s+# Sample`,
		ts + ` assistant: The README says:`,
		ts + ` ═══ done after 2 turns`,
	}
	rest := out
	for _, w := range want {
		loc := regexp.MustCompile(`(?m)^` + w).FindStringIndex(rest)
		if loc == nil {
			t.Errorf("log lacks a line matching %q (in this order):\n%s", w, out)
			continue
		}
		rest = rest[loc[1]:]
	}

	code, out, _ = p.Brood("tasks", "log", "--json", id)
	var recs []session.Record
	if code != 0 || json.Unmarshal([]byte(out), &recs) != nil {
		t.Fatalf("--json: code %d\n%s", code, out)
	}
	var types []string
	for _, r := range recs {
		types = append(types, string(r.Type))
	}
	if got := strings.Join(types, " "); !strings.HasPrefix(got, "meta message") || !strings.Contains(got, "tool_call tool_result") || !strings.HasSuffix(got, "end") {
		t.Errorf("--json record types: %s", got)
	}

	code, out, errOut = p.Brood("tasks", "log", "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	if code != 1 || out != "" || !strings.HasPrefix(errOut, "brood: no task 01ARZ3NDEKTSV4RRFFQ69G5FAV under ") {
		t.Errorf("unknown id: code %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestTasksLogLongLine: a transcript line over the cap (a child may
// append anything to its transcript) is named and skipped; the records
// after it are still shown, and the transcript is never said to be
// missing.
func TestTasksLogLongLine(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	id := p.DispatchOK("scout", "what is in the README?")
	path := filepath.Join(p.Root, ".brood", "dispatch", id, "session.jsonl")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	long := bytes.Repeat([]byte("x"), 33<<20)
	_, err = f.Write(append(append(long, '\n'), `{"type":"steer","text":"after the long line"}`+"\n"...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := p.Brood("tasks", "log", id)
	if code != 0 || strings.Contains(errOut, "no transcript") {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	for _, w := range []string{`(?m)^\(line \d+: 33 MB, skipped: longer than 32 MB\)$`, `(?m)^` + `\d\d:\d\d:\d\d ═══ run of scout`, `✉ after the long line\n`} {
		if !regexp.MustCompile(w).MatchString(out) {
			t.Errorf("log lacks %q:\n%s", w, out)
		}
	}
	code, out, _ = p.Brood("tasks", "log", "--json", id)
	var recs []session.Record
	if code != 0 || json.Unmarshal([]byte(out), &recs) != nil || len(recs) < 3 || recs[len(recs)-1].Text != "after the long line" {
		t.Errorf("--json: code %d, %d records", code, len(recs))
	}
}

// TestTasksLogRedactsWhatTheChildWrote: `tasks log` passes the child's
// transcript through this process's redactor, every .env value of the
// project included, before it cuts a line short: a child writes its
// transcript with what it knew for a secret, which may be less than its
// parent knows (red team 21 P2-2).
func TestTasksLogRedactsWhatTheChildWrote(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	id := p.DispatchOK("scout", "what is in the README?")
	// A value the child's transcript holds, made a secret after it ran.
	clitest.WriteFile(t, filepath.Join(p.Root, ".env"), "README_TOKEN=\"Reading the README\"\n")
	for _, args := range [][]string{{"tasks", "log", id}, {"tasks", "log", "--json", id}} {
		code, out, errOut := p.Brood(args...)
		if code != 0 {
			t.Fatalf("%v: code %d, stderr %q", args, code, errOut)
		}
		if strings.Contains(out, "Reading the README") || !strings.Contains(out, "[REDACTED:.env:README_TOKEN]") {
			t.Errorf("%v: want the marker, not the value:\n%s", args, out)
		}
	}
}

// TestTasksOutputRedactsWhatTheChildWrote: `tasks output` passes the
// child's result through this process's redactor (red team 21 P2-2).
func TestTasksOutputRedactsWhatTheChildWrote(t *testing.T) {
	p := clitest.NewDispatchProject(t, true)
	id := p.DispatchOK("scout", "what is in the README?")
	clitest.WriteFile(t, filepath.Join(p.Root, ".env"), "README_TOKEN=\"The README says\"\n")
	for _, args := range [][]string{{"tasks", "output", id}, {"tasks", "output", "--json", id}} {
		code, out, errOut := p.Brood(args...)
		if code != 0 {
			t.Fatalf("%v: code %d, stderr %q", args, code, errOut)
		}
		if strings.Contains(out, "The README says") || !strings.Contains(out, "[REDACTED:.env:README_TOKEN]") {
			t.Errorf("%v: want the marker, not the value:\n%s", args, out)
		}
	}
}
