package spawn_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/taskdir"
)

// envNSCase names the case of TestUserNSAnswer a helper process runs.
const envNSCase = "BROOD_TEST_USERNS_CASE"

// maxUserNS is the user namespace limit of the namespace this process is
// in (per user namespace since Linux 4.9): 0 refuses every new one below.
const maxUserNS = "/proc/sys/user/max_user_namespaces"

const nsScript = `
agents:
  explore:
    - tools:
        - Bash: {command: "echo x > file.txt"}
    - say: "write: {{result 0}}"
  writer:
    - tools:
        - Write: {file_path: "out.txt", content: "written\n"}
    - say: "wrote: {{result 0}}"
  isolated:
    - tools:
        - Write: {file_path: "out.txt", content: "written\n"}
    - say: "wrote: {{result 0}}"
`

// TestUserNSAnswer: no spawn probes the user namespaces where they work
// (the child's own start in one settles it), a start the kernel refuses
// one (EPERM: a seccomp profile denying them) probes once and starts the
// child as the probe's "no" has it (its note, no view, still confined),
// a limit reached (max_user_namespaces: ENOSPC) fails the start and
// settles nothing, so once the limit frees a child starts in its
// namespace, and once a child started in a user namespace a later
// refusal fails that start, never making the child weaker. Each case
// runs in a process of its own, in a user namespace whose namespace
// limit it sets (0: the kernel refuses every child's for a limit).
func TestUserNSAnswer(t *testing.T) {
	if sandbox.LandlockABI() < 1 || !sandbox.ProbeUserNS(context.Background()).UserNS {
		t.Skip("needs Landlock and user namespaces")
	}
	cases := []struct {
		name string
		// refuse: "" never; "first": none here before the first child;
		// "limit": the limit reached before the first child, freed
		// before a second; "limit second", "second": the limit reached,
		// or none here, between two children.
		refuse, agent string
		probes        int    // -1: not counted (a worktree writer's copy waits for one, begun at its dispatch too)
		note          string // in the (last) child's envelope; "" none
		text          string // in the (last) call's result
	}{
		{"works", "", "explore", 0, "", "Read-only file system"},
		{"writer works", "", "writer", 0, "", "wrote"},
		{"refused", "first", "explore", 1, "no user namespaces here: the read-only child's metadata calls", "Permission denied"},
		{"writer refused", "first", "writer", 1, "no user namespaces here: the work tree's configuration", "wrote"},
		{"limit", "limit", "explore", 0, "", "Read-only file system"},
		{"writer limit", "limit", "writer", 0, "", "wrote"},
		{"worktree writer limit", "limit", "isolated", -1, "", "wrote"},
		{"limit after one started", "limit second", "explore", 0, "", "the user namespace limit is reached"},
		{"refused after one started", "second", "explore", 0, "", "may be the program's own refusal"},
	}
	if name := os.Getenv(envNSCase); name != "" {
		for _, c := range cases {
			if c.name == name {
				nsCase(t, c.refuse, c.agent, c.probes, c.note, c.text)
				return
			}
		}
		t.Fatalf("no case %q", name)
	}
	exe, err := os.Executable()
	must(t, err)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(exe, "-test.run=^TestUserNSAnswer$", "-test.v")
			cmd.Env = append(os.Environ(), envNSCase+"="+c.name)
			// Root of a user namespace of its own, or the user with
			// CAP_SYS_RESOURCE there: what sets its namespace limit.
			sandbox.AddNamespaces(cmd, syscall.CLONE_NEWUSER, []uintptr{24 /* CAP_SYS_RESOURCE */})
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if strings.Contains(out.String(), "--- SKIP") {
				t.Skipf("%s", out.String())
			}
			if err != nil || !strings.Contains(out.String(), "--- PASS: TestUserNSAnswer") {
				t.Fatalf("case %s: %v\n%s", c.name, err, out.String())
			}
		})
	}
}

// nsCase is one case of TestUserNSAnswer, in its helper process.
func nsCase(t *testing.T, refuse, agent string, probes int, note, text string) {
	if err := os.WriteFile(maxUserNS, []byte("100\n"), 0o644); err != nil {
		t.Skipf("cannot set this user namespace's limit: %v", err)
	}
	agents := map[string]string{
		"writer":   "---\nname: writer\ndescription: writes\ntools: Read, Write\n---\nYou write.\n",
		"isolated": "---\nname: isolated\ndescription: writes\ntools: Read, Write\nisolation: worktree\n---\nYou write.\n",
	}
	p := newProject(t, nsScript, agents)
	git(t, p.root, "add", "-A")
	git(t, p.root, "commit", "-qm", "init")
	s := p.settings(nil)
	if refuse == "first" || refuse == "second" {
		// A cgroup's child is cloned by clone3, whose flags no seccomp
		// filter reads (denyUserNS).
		s.Pool.Containment = "pidns"
	}
	d := p.dispatcher(s, 1, nil)
	limit := func(n string) { must(t, os.WriteFile(maxUserNS, []byte(n+"\n"), 0o644)) }
	run := func(prompt string) *call.Result {
		out, err := d.Call(context.Background(), call.Spec{Agent: agent, Prompt: prompt})
		must(t, err)
		return out
	}
	switch refuse {
	case "first":
		denyUserNS(t)
	case "limit":
		limit("0")
		first := run("first")
		if first.Status == dispatch.StatusDone || !strings.Contains(first.Text, "the user namespace limit is reached") {
			t.Errorf("a start refused for a limit: %s, want failed with the limit's sentence:\n%s", first.Status, first.Text)
		}
		if dispatch.Exists(filepath.Join(p.root, "out.txt")) {
			t.Error("the writer ran though its start was refused")
		}
		limit("100")
	case "second", "limit second":
		if first := run("first"); first.Status != dispatch.StatusDone {
			t.Fatalf("the first child: %s\n%s", first.Status, first.Text)
		}
		if refuse == "second" {
			denyUserNS(t)
		} else {
			limit("0")
		}
	}
	out := run("go")
	if !strings.Contains(out.Text, text) {
		t.Errorf("the result does not say %q:\n%s", text, out.Text)
	}
	if !strings.HasSuffix(refuse, "second") && out.Status != dispatch.StatusDone {
		t.Errorf("status %s, want done:\n%s", out.Status, out.Text)
	}
	if got := spawn.NSProbes(d); probes >= 0 && got != probes {
		t.Errorf("the user namespaces were probed %d times, want %d", got, probes)
	}
	var env dispatch.Envelope
	must(t, dispatch.ReadJSON(filepath.Join(dispatch.Dir(p.root, out.TaskID), taskdir.Envelope), &env))
	got := strings.Join(env.Notes, "\n")
	if note == "" && strings.Contains(got, "user namespaces") || note != "" && !strings.Contains(got, note) {
		t.Errorf("the envelope's notes %q, want %q", got, note)
	}
	if agent == "explore" && dispatch.Exists(filepath.Join(p.root, "file.txt")) {
		t.Error("the read-only child wrote file.txt")
	}
}
