package spawn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestChildReadsItsProjectEnvOnce: a child has one redactor, for what it
// writes and sends up (its transcript, events and result) and for its
// tools' output alike, so it reads its project's .env once, not once for
// each; and a value of it, printed by a tool and said by the model, is in
// none of its records. The .env's opens are counted by inotify while the
// child runs (the parent reads no .env here).
func TestChildReadsItsProjectEnvOnce(t *testing.T) {
	const secret = "dotenv-s3cret-7d1c2b9e"
	script := `
agents:
  explore:
    - tools:
        - Bash: {command: "echo ` + secret + `"}
    - say: "the value is ` + secret + `; the tool said: {{result 0}}"
  writer:
    - tools:
        - Bash: {command: "echo ` + secret + `"}
    - say: "the value is ` + secret + `; the tool said: {{result 0}}"
`
	agents := map[string]string{
		"writer": "---\nname: writer\ndescription: writes\ntools: Read, Write, Bash\n---\nYou write.\n",
	}
	for _, agent := range []string{"explore", "writer"} {
		t.Run(agent, func(t *testing.T) {
			p := newProject(t, script, agents)
			must(t, os.WriteFile(filepath.Join(p.root, ".gitignore"), []byte(".brood/\n.env\n"), 0o644))
			dotenv := filepath.Join(p.root, ".env")
			must(t, os.WriteFile(dotenv, []byte("API_TOKEN="+secret+"\n"), 0o600))
			git(t, p.root, "add", "-A")
			git(t, p.root, "commit", "-qm", "init")
			d := p.dispatcher(p.settings(nil), 1, nil)
			opens := watchOpens(t, dotenv)
			out, err := d.Call(context.Background(), call.Spec{Agent: agent, Prompt: "go"})
			must(t, err)
			if out.Status != dispatch.StatusDone {
				t.Fatalf("status %s:\n%s", out.Status, out.Text)
			}
			if n := opens(); n != 1 {
				t.Errorf("the child opened its project's .env %d times, want once (one redactor)", n)
			}
			if strings.Contains(out.Text, secret) || strings.Count(out.Text, "[REDACTED:.env:API_TOKEN]") != 2 {
				t.Errorf("the result does not hide the .env value, said and printed:\n%s", out.Text)
			}
			dir := dispatch.Dir(p.root, out.TaskID)
			for _, f := range []string{dispatch.SessionFile, dispatch.ResultFile} {
				b, err := os.ReadFile(filepath.Join(dir, f))
				must(t, err)
				if strings.Contains(string(b), secret) {
					t.Errorf("%s holds the .env value:\n%s", f, b)
				}
			}
		})
	}
}

// watchOpens counts the opens of path from now on, by any process: the
// function returned says how many so far.
func watchOpens(t *testing.T, path string) func() int {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	must(t, err)
	t.Cleanup(func() { unix.Close(fd) })
	// Closes too: inotify merges an event into the same one just before it.
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_OPEN|unix.IN_CLOSE); err != nil {
		t.Fatal(err)
	}
	n := 0
	return func() int {
		buf := make([]byte, 64*unix.SizeofInotifyEvent)
		for {
			k, err := unix.Read(fd, buf)
			if errors.Is(err, unix.EAGAIN) {
				return n
			}
			must(t, err)
			for b := buf[:k]; len(b) >= unix.SizeofInotifyEvent; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
				if ev.Mask&unix.IN_OPEN != 0 {
					n++
				}
				b = b[unix.SizeofInotifyEvent+int(ev.Len):]
			}
		}
	}
}
