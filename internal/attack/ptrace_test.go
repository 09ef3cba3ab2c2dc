package attack_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/broodhq/brood/internal/sandbox"
	"github.com/broodhq/brood/internal/session"
)

// ptraceEnv makes the test binary try to ptrace the pid it names, print
// what happened and exit: the attack a child's Bash runs against a sibling.
const ptraceEnv = "BROOD_ATTACK_PTRACE"

// tryPtrace attaches to pid and detaches again; it prints PTRACED or
// ptrace-denied.
func tryPtrace(arg string) int {
	pid, err := strconv.Atoi(arg)
	if err != nil {
		fmt.Println("ptrace-bad-pid", arg)
		return 2
	}
	if err := unix.PtraceSeize(pid); err != nil {
		fmt.Println("ptrace-denied:", err)
		return 0
	}
	fmt.Println("PTRACED", pid)
	_ = unix.PtraceDetach(pid)
	return 0
}

// sleeperEnv makes the test binary exec sleep with its value as argument,
// holding no more capabilities than the attacker's Bash does (as root:
// CAP_SYS_PTRACE, CAP_PERFMON and CAP_SYS_ADMIN dropped): the control, a
// dumpable process the attacker reaches, so the probes are shown to work.
const sleeperEnv = "BROOD_ATTACK_SLEEPER"

func execSleeper(arg string) int {
	runtime.LockOSThread() // the drop is this thread's, and exec is from it
	if err := sandbox.NoIntrospectionForCommand(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	path, err := exec.LookPath("sleep")
	if err == nil {
		err = syscall.Exec(path, []string{"sleep", arg}, os.Environ())
	}
	fmt.Fprintln(os.Stderr, "exec sleep:", err)
	return 1
}

// TestSiblingCannotPtrace: a child's Bash, running as the same uid as a
// sibling brood child, can neither ptrace it nor open its /proc/PID/mem,
// /proc/PID/environ or /proc/PID/fd. Every child is non-dumpable
// (PR_SET_DUMPABLE 0); as root it is started without CAP_SYS_PTRACE, and
// the commands it runs for the model (Bash) also without CAP_PERFMON and
// CAP_SYS_ADMIN, which the kernel counts for PTRACE_MODE_READ (environ,
// fd) past that flag. Under Landlock a sibling is also outside the
// attacker's domain. With the kernel sandbox turned off the flag and the
// dropped capabilities hold alone, and a plain process of the same uid is
// the control: as root the same commands reach it, so the test cannot pass
// by reading nothing. As a non-root user (the PID-namespace fallback) each
// child has a user namespace of its own, which holds off the control too.
func TestSiblingCannotPtrace(t *testing.T) {
	for _, mode := range []string{"landlock", "no_landlock"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "landlock" && sandbox.LandlockABI() < 1 {
				t.Skip("no Landlock on this kernel: the no_landlock case is the one that applies")
			}
			p := newProject(t, nil)
			if mode == "no_landlock" {
				writeFile(t, filepath.Join(p.home, ".config", "brood", "settings.toml"), "[isolation]\nno_landlock = true\n")
			}
			victimID, _ := startBackground(t, p, nil, p.script("slow.yaml", slowChild))
			victim := loggedPID(t, p, victimID)

			// The control: a process of this uid that is not a brood child.
			exe, _ := os.Executable()
			control := exec.Command(exe)
			control.Env = append(os.Environ(), sleeperEnv+"="+uniqueSleep())
			if err := control.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { control.Process.Kill(); control.Wait() })

			probe := func(pid int, tag string) string {
				return fmt.Sprintf(`v=%d; (cat /proc/$v/environ >/dev/null) 2>/dev/null && echo OPENED-environ-%[2]s || echo denied-environ-%[2]s; `+
					`readlink /proc/$v/fd/1 >/dev/null 2>&1 && echo OPENED-fd-%[2]s || echo denied-fd-%[2]s; `+
					`dd if=/proc/$v/mem of=/dev/null bs=1 count=0 2>/dev/null && echo OPENED-mem-%[2]s || echo denied-mem-%[2]s; `+
					`%[3]s=$v %[4]q 2>&1 | sed 's/^/%[2]s: /'`, pid, tag, ptraceEnv, exe)
			}
			cmd := probe(victim, "victim") + "; " + probe(control.Process.Pid, "control")
			mdl := p.script("snoop.yaml", fmt.Sprintf(`agents:
  general-purpose:
    - tools:
        - Bash: {command: %q}
    - say: "snooped"
`, cmd))
			code, out, errs := p.brood(t.Context(), nil, "subagent", "--json", "--model", mdl, "--permission-mode", "bypassPermissions", "general-purpose", "snoop")
			if code != 0 {
				t.Fatalf("snooper: code %d\n%s\n%s", code, out, errs)
			}
			got := bashOutputs(t, p, victimID)
			t.Cleanup(func() {
				if t.Failed() {
					ents, _ := os.ReadDir(filepath.Join(p.root, ".brood", "dispatch"))
					for _, e := range ents {
						b, _ := os.ReadFile(filepath.Join(p.root, ".brood", "dispatch", e.Name(), "result.json"))
						t.Logf("%s: %s", e.Name(), b)
					}
				}
			})
			denials := []string{"denied-mem-victim", "denied-environ-victim", "denied-fd-victim", "victim: ptrace-denied"}
			for _, deny := range denials {
				if !strings.Contains(got, deny) {
					t.Errorf("the sibling reached the brood child %d: want %q in\n%s", victim, deny, got)
				}
			}
			if mode == "no_landlock" && os.Getuid() == 0 {
				// The control has the attacker's capabilities and is
				// dumpable: the probes reach it.
				for _, reach := range []string{"OPENED-mem-control", "OPENED-environ-control", "OPENED-fd-control", "control: PTRACED"} {
					if !strings.Contains(got, reach) {
						t.Errorf("the control was not reached, so the test proves nothing: want %q in\n%s", reach, got)
					}
				}
			}
			if strings.Contains(got, "OPENED-mem-victim") || strings.Contains(got, "OPENED-environ-victim") || strings.Contains(got, "OPENED-fd-victim") || strings.Contains(got, "PTRACED "+strconv.Itoa(victim)) {
				t.Errorf("the sibling reached the brood child %d:\n%s", victim, got)
			}
		})
	}
}

// loggedPID is the pid the parent recorded for a task's child.
func loggedPID(t *testing.T, p *project, id string) int {
	t.Helper()
	var lg struct {
		PID int `json:"pid"`
	}
	b, err := os.ReadFile(filepath.Join(p.root, ".brood", "dispatch", id, "dispatch-log.json"))
	if err != nil || json.Unmarshal(b, &lg) != nil || lg.PID <= 0 {
		t.Fatalf("no pid for %s: %v %s", id, err, b)
	}
	return lg.PID
}

// bashOutputs is what every Bash call returned in the transcripts of the
// project's tasks other than skip.
func bashOutputs(t *testing.T, p *project, skip string) string {
	t.Helper()
	ents, _ := os.ReadDir(filepath.Join(p.root, ".brood", "dispatch"))
	var b strings.Builder
	for _, e := range ents {
		if e.Name() == skip {
			continue
		}
		recs, _, err := session.ReadFile(filepath.Join(p.root, ".brood", "dispatch", e.Name(), "session.jsonl"))
		if err != nil {
			continue
		}
		for _, r := range recs {
			if r.Type == session.RecToolResult {
				b.WriteString(r.Output)
			}
		}
	}
	return b.String()
}

func firstLineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
