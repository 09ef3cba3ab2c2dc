package spawn

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/taskdir"
	"github.com/broodhq/brood/internal/trust"
)

// TestGuardRecordHoldsNoCredentials: .git/config's credentials (a
// url.<x>.insteadOf with user:password@, an http.extraHeader token) are
// in a guard's record only encrypted (review P3-5): neither the file nor
// any string in it, base64-decoded, holds them. The crash restore still
// puts .git/config back byte for byte, credentials and all.
func TestGuardRecordHoldsNoCredentials(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", "")
	root := t.TempDir()
	config := filepath.Join(root, ".git", "config")
	if err := os.MkdirAll(filepath.Dir(config), 0o755); err != nil {
		t.Fatal(err)
	}
	secrets := []string{"hunter2-pass", "tok-9f8e7d6c5b"}
	orig := []byte("[core]\n\tbare = false\n[url \"https://alice:" + secrets[0] + "@git.example.com/\"]\n\tinsteadOf = https://git.example.com/\n[http]\n\textraHeader = Authorization: Bearer " + secrets[1] + "\n")
	if err := os.WriteFile(config, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	state, err := trust.SnapshotPaths(root, []string{".git/config"})
	if err != nil {
		t.Fatal(err)
	}
	sr, _ := state.Record()
	dir := filepath.Join(taskdir.Open(root).Records().Path(), guardsDir)
	rec := guardRecord{Version: guardRecordVersion, TaskID: taskdir.NewID(), Project: root, Owner: procID{PID: 1 << 30, Start: "1"}, States: []trust.StateRecord{sr}}
	if err := writeGuardRecord(dir, &rec); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, guardRecordName(rec)))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(jsonStrings(t, raw), string(raw)) {
		texts := []string{s}
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			texts = append(texts, string(b))
		}
		for _, text := range texts {
			for _, secret := range secrets {
				if bytes.Contains([]byte(text), []byte(secret)) {
					t.Errorf("the guard record holds %q in the clear", secret)
				}
			}
		}
	}
	// The child's change, then the crash restore: back byte for byte.
	if err := os.WriteFile(config, []byte("[core]\n\tfsmonitor = ./evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if lines := RestoreCrashedGuards(root); len(lines) != 1 {
		t.Errorf("lines %q, want one", lines)
	}
	if got, _ := os.ReadFile(config); !bytes.Equal(got, orig) {
		t.Errorf(".git/config put back as %q, want %q", got, orig)
	}
}

// jsonStrings are every string value in the JSON document b.
func jsonStrings(t *testing.T, b []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
