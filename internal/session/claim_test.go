package session_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

// claimChildEnv names the new session's transcript a re-executed test
// binary starts (ClaimLater), writes its meta record and prompt to, says
// so on stdout, and then waits in, as a root waits for its first model
// request, until it is killed.
const claimChildEnv = "BROOD_SESSION_CLAIM_CHILD"

func claimChild(path string) int {
	w, err := session.Open(path, session.Options{Claim: session.ClaimLater(path, "")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	m := model.Message{Role: model.RoleUser, Content: []model.Part{{Type: model.PartText, Text: "the prompt"}}}
	for _, r := range []session.Record{{Type: session.RecMeta, System: "the system prompt"}, {Type: session.RecMessage, Message: &m}} {
		if err := w.Append(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	fmt.Println("asking")
	select {} // the first request, never answered
}

// TestClaimLaterOneRecordSealedBeforeFirstLine: a new session's owner
// record (ClaimLater) is not written before the transcript's first line,
// then once, sealed with that line's hash, and it holds when the process
// is killed (SIGKILL) right after, before its background sync was waited
// for: the session is the user's (Mine), as Claim's synced writes made it.
func TestClaimLaterOneRecordSealedBeforeFirstLine(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	path := filepath.Join(t.TempDir(), ".brood", "sessions", "01MINE.jsonl")

	// In this process: nothing on disk until the first line.
	w, err := session.Open(path, session.Options{Claim: session.ClaimLater(path, "")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(session.OwnerPath(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("owner record before the transcript's first line: %v", err)
	}
	if err := w.Append(session.Record{Type: session.RecMeta, System: "sys"}); err != nil {
		t.Fatal(err)
	}
	var o session.Owner
	b, err := os.ReadFile(session.OwnerPath(path))
	if err != nil || json.Unmarshal(b, &o) != nil || o.FirstLine == "" || o.Seal == "" {
		t.Fatalf("owner record after the first line: %v %s", err, b)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := session.Mine(path); err != nil {
		t.Errorf("Mine: %v", err)
	}

	// A session that wrote no line still gets its record at Close.
	empty := filepath.Join(filepath.Dir(path), "01EMPTY.jsonl")
	w, err = session.Open(empty, session.Options{Claim: session.ClaimLater(empty, "")})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := session.Mine(empty); err != nil {
		t.Errorf("Mine of a session closed without a line: %v", err)
	}

	// Killed while waiting for its first request.
	killed := filepath.Join(filepath.Dir(path), "01KILLED.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), claimChildEnv+"="+killed)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if sc := bufio.NewScanner(out); !sc.Scan() || sc.Text() != "asking" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the child did not reach its first request: %q", sc.Text())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v", cmd.ProcessState)
	}
	if err := session.Mine(killed); err != nil {
		t.Errorf("Mine of the killed session: %v", err)
	}
	if recs, _, err := session.ReadFile(killed); err != nil || len(recs) != 2 {
		t.Errorf("the killed session's transcript: %d records, %v", len(recs), err)
	}
}

// TestClaimLaterTranscriptMadeWithItsFirstLine: a new session's
// transcript (Options.Claim) does not exist before its first line (a kill
// before it leaves no transcript to refuse as a shipped one), and appears
// holding that line, after its owner record.
func TestClaimLaterTranscriptMadeWithItsFirstLine(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	path := filepath.Join(t.TempDir(), ".brood", "sessions", "01NEW.jsonl")
	w, err := session.Open(path, session.Options{Claim: session.ClaimLater(path, "")})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the transcript exists before its first line: %v", err)
	}
	for _, r := range []session.Record{{Type: session.RecMeta, System: "sys"}, {Type: session.RecNote, Text: "second"}} {
		if err := w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, bad, err := session.ReadFile(path)
	if err != nil || bad != 0 || len(recs) != 2 || recs[0].Type != session.RecMeta || recs[1].Text != "second" {
		t.Fatalf("transcript: %+v, %d bad, %v", recs, bad, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("transcript mode: %v %v", st, err)
	}
	if err := session.Mine(path); err != nil {
		t.Errorf("Mine: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*tmp*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestClaimLaterRecordFailureIsTheWritersError: a new session whose owner
// record cannot be written (a directory in its place) writes no line and
// no transcript; the failure, naming the record, is the Append's and the
// Writer's (Err, errors.Is ErrNotMade), so the run does not pass for a
// recorded one; Close does not say it again.
func TestClaimLaterRecordFailureIsTheWritersError(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	path := filepath.Join(t.TempDir(), ".brood", "sessions", "01BLOCKED.jsonl")
	if err := os.MkdirAll(filepath.Join(session.OwnerPath(path), "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	w, err := session.Open(path, session.Options{Claim: session.ClaimLater(path, "")})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Append(session.Record{Type: session.RecMeta, System: "sys"})
	if !errors.Is(err, session.ErrNotMade) || !strings.Contains(err.Error(), session.OwnerPath(path)) {
		t.Fatalf("Append: %v, want ErrNotMade naming %s", err, session.OwnerPath(path))
	}
	if err := w.Append(session.Record{Type: session.RecNote, Text: "later"}); err == nil {
		t.Error("a later line was written without its owner record")
	}
	if got := w.Err(); !errors.Is(got, session.ErrNotMade) {
		t.Errorf("Err: %v", got)
	}
	if err := w.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a transcript without its owner record was left: %v", err)
	}
}

// TestMineSaysAnEmptyRecordIsACrash: an owner record a power cut left
// empty or cut short (it is renamed into place before its sync) is
// refused saying so, not with a JSON error.
func TestMineSaysAnEmptyRecordIsACrash(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	dir := filepath.Join(t.TempDir(), ".brood", "sessions")
	for name, record := range map[string]string{"01EMPTY": "", "01CUT": "{\n  \"version\": 1,\n  \"sess"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".jsonl")
			writeFile(t, path, "")
			writeFile(t, session.OwnerPath(path), record)
			err := session.Mine(path)
			if err == nil || !strings.Contains(err.Error(), "empty or cut short") || !strings.Contains(err.Error(), "power cut") || strings.Contains(err.Error(), "JSON") {
				t.Errorf("Mine: %v", err)
			}
		})
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}
