package run_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/cli/clitest"
)

// recallScript answers with the conversation's first user message, so a
// continued session shows which one it continued.
const recallScript = `agents:
  root:
    - say: "FIRST={{.Prompt}}"
    - say: "FIRST={{.Prompt}}"
`

func sessionOf(t *testing.T, out string) string {
	t.Helper()
	var r struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return r.SessionID
}

// TestSessionID: --session-id names the new session (result session_id,
// the transcript's file), --resume finds it, and --continue picks it as
// the newest; an id in use, a non-UUID and --session-id with --resume are
// refused with a line saying what to do.
func TestSessionID(t *testing.T) {
	p := clitest.NewProject(t)
	mdl := p.Script("s.yaml", echoScript)
	const id = "123e4567-e89b-12d3-a456-426614174000"
	code, out, errOut := p.Brood("-p", "--model", mdl, "--output-format", "json", "--session-id", strings.ToUpper(id), "first run")
	if code != 0 || sessionOf(t, out) != id {
		t.Fatalf("exit %d, session_id %q, want %s; stderr %s", code, out, id, errOut)
	}
	if _, err := os.Stat(filepath.Join(p.Root, ".brood", "sessions", id+".jsonl")); err != nil {
		t.Fatalf("no transcript under the given id: %v", err)
	}
	if strings.Contains(errOut, "accepted;") {
		t.Errorf("--session-id still prints a note: %s", errOut)
	}
	// A ULID-named session started before: --continue still picks the
	// UUID one, the newest.
	for _, tc := range []struct {
		name string
		args []string
	}{{"resume", []string{"--resume", id}}, {"continue", []string{"--continue"}}} {
		code, out, errOut = p.Brood(append([]string{"-p", "--model", mdl, "--output-format", "json"}, append(tc.args, "again")...)...)
		if code != 0 || sessionOf(t, out) != id {
			t.Errorf("%s: exit %d, session_id in %s, want %s; stderr %s", tc.name, code, out, id, errOut)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"in use", []string{"--session-id", id}, 1, "--session-id " + id + ": the session is already in use; continue it with --resume " + id},
		{"not a uuid", []string{"--session-id", "nope"}, 1, `--session-id "nope": not a UUID`},
		{"with resume", []string{"--session-id", "223e4567-e89b-12d3-a456-426614174000", "--resume", id}, 2, "--session-id names a new session"},
	} {
		code, _, errOut := p.Brood(append([]string{"-p", "--model", mdl}, append(tc.args, "x")...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d (want %d), stderr %q lacks %q", tc.name, code, tc.code, errOut, tc.want)
		}
	}
}

// TestNoSessionPersistence: with --no-session-persistence nothing is
// left under .brood/sessions, so --continue continues the session before
// it, and the transcript the run wrote is gone when it ends.
func TestNoSessionPersistence(t *testing.T) {
	p := clitest.NewProject(t)
	mdl := p.Script("s.yaml", recallScript)
	code, out, errOut := p.Brood("-p", "--model", mdl, "--output-format", "json", "kept")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	kept := sessionOf(t, out)
	code, out, errOut = p.Brood("-p", "--model", mdl, "--output-format", "json", "--no-session-persistence", "not kept")
	if code != 0 || strings.Contains(errOut, "accepted;") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	var r struct {
		TranscriptPath string `json:"transcript_path"`
	}
	_ = json.Unmarshal([]byte(out), &r)
	if strings.HasPrefix(r.TranscriptPath, p.Root) || r.TranscriptPath == "" {
		t.Errorf("the transcript was written in the project: %q", r.TranscriptPath)
	}
	if _, err := os.Stat(r.TranscriptPath); !os.IsNotExist(err) {
		t.Errorf("the temporary transcript %s is left behind (%v)", r.TranscriptPath, err)
	}
	files, _ := filepath.Glob(filepath.Join(p.Root, ".brood", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Errorf("sessions: %v, want only %s", files, kept)
	}
	code, out, errOut = p.Brood("-p", "--model", mdl, "--output-format", "json", "--continue", "and now?")
	if code != 0 || sessionOf(t, out) != kept || !strings.Contains(out, "FIRST=kept") {
		t.Errorf("--continue after --no-session-persistence: exit %d, %s, want session %s; stderr %s", code, out, kept, errOut)
	}
}
