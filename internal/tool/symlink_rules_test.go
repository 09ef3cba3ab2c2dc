package tool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestSymlinksCannotLeadPastRules: a link inside the workspace is judged as
// the file it points to.
func TestSymlinksCannotLeadPastRules(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	outside := filepath.Join(root, "home", ".bashrc")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(ws, 0o755))
	must(os.MkdirAll(filepath.Dir(outside), 0o755))
	must(os.WriteFile(outside, []byte("x"), 0o644))
	must(os.Symlink(outside, filepath.Join(ws, "notes.txt")))
	must(os.WriteFile(filepath.Join(ws, ".env"), []byte("SECRET=1"), 0o644))
	must(os.Symlink(filepath.Join(ws, ".env"), filepath.Join(ws, "config.txt")))

	edits, err := NewPermissions("acceptEdits", nil, nil, nil)
	must(err)
	in, _ := json.Marshal(map[string]string{"file_path": "notes.txt", "content": "pwned"})
	if d := edits.Check("Write", in, ws); d.Verdict == Allow {
		t.Errorf("a write through a link out of the workspace was allowed: %s", d.Reason)
	}
	in, _ = json.Marshal(map[string]string{"file_path": "plain.txt", "content": "ok"})
	if d := edits.Check("Write", in, ws); d.Verdict != Allow {
		t.Errorf("a plain write inside the workspace: %v %s", d.Verdict, d.Reason)
	}

	denyEnv, err := NewPermissions("default", nil, []string{"Read(.env)"}, nil)
	must(err)
	in, _ = json.Marshal(map[string]string{"file_path": "config.txt"})
	if d := denyEnv.Check("Read", in, ws); d.Verdict != Deny {
		t.Errorf("a denied file read through a link: %v %s", d.Verdict, d.Reason)
	}
}

// TestConcurrentEditsOfOneFileAllLand: a turn's Edits of one file run one
// after another, so none is lost.
func TestConcurrentEditsOfOneFileAllLand(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := 0; i < 20; i++ {
		lines = append(lines, "line-"+string(rune('a'+i)))
	}
	f := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := NewSet(Builtins()...)
	env := &Env{Dir: dir}
	var wg sync.WaitGroup
	for _, l := range lines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in, _ := json.Marshal(map[string]string{"file_path": "f.txt", "old_string": l + "\n", "new_string": l + "-edited\n"})
			if r := set.Run(context.Background(), env, "Edit", in); r.IsError {
				t.Error(r.Content)
			}
		}()
	}
	wg.Wait()
	b, _ := os.ReadFile(f)
	if n := strings.Count(string(b), "-edited"); n != len(lines) {
		t.Fatalf("%d of %d edits landed:\n%s", n, len(lines), b)
	}
}

func TestEditKeepsCRLFAndBashClampsTimeout(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "w.txt")
	if err := os.WriteFile(f, []byte("one();\r\ntwo();\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := NewSet(Builtins()...)
	env := &Env{Dir: dir}
	in, _ := json.Marshal(map[string]string{"file_path": "w.txt", "old_string": "one();", "new_string": "one();\nextra();"})
	if r := set.Run(context.Background(), env, "Edit", in); r.IsError {
		t.Fatal(r.Content)
	}
	if b, _ := os.ReadFile(f); string(b) != "one();\r\nextra();\r\ntwo();\r\n" {
		t.Errorf("line endings mixed: %q", b)
	}
	in, _ = json.Marshal(map[string]any{"command": "echo fine", "timeout": 1e13})
	if r := set.Run(context.Background(), &Env{Dir: dir, Perms: nil}, "Bash", in); r.IsError || !strings.Contains(r.Content, "fine") {
		t.Errorf("a huge timeout broke the command: %s", r.Content)
	}
	t.Setenv("OPENAI_API_KEY", "sk-test-zzz")
	in, _ = json.Marshal(map[string]any{"command": "echo \"[$OPENAI_API_KEY]\""})
	if r := set.Run(context.Background(), &Env{Dir: dir}, "Bash", in); !strings.Contains(r.Content, "[]") {
		t.Errorf("the provider key reached the command: %s", r.Content)
	}
}
