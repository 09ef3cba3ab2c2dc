package attack_test

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestProcShowsOnlyTheChildsOwnProcesses (red team 20 P3-3): a child's
// Bash lists /proc and reads every command line there; a process of the
// user's that is no part of the child's tree (a marker with a unique
// argument, which the test itself sees) must not be among them, under
// every containment (a cgroup, as root, once read every host process's
// command line: another user's `mysql -pPASSWORD`, another run's prompt),
// for a read-only child and a writer alike. The child's own ps still works
// (a PID namespace seen through the host's /proc broke it: "lookup self").
func TestProcShowsOnlyTheChildsOwnProcesses(t *testing.T) {
	for _, c := range containments {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, nil)
			marker := uniqueSleep()
			m := exec.Command("sleep", marker)
			if err := m.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Process.Kill(); m.Wait() })
			eventually(t, "the marker to run", func() bool { return len(liveWith(marker)) > 0 })

			probe := `echo "procs: $(ls /proc | grep -c '^[0-9]')"; ` +
				`for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < $f; echo; done 2>/dev/null | sed 's/^/cmdline: /'; ` +
				`out=$(ps -e -o pid=,args= 2>&1); st=$?; echo "$out" | sed 's/^/ps: /'; echo "ps-status: $st"`
			mdl := p.script("procs.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: reader, prompt: "look"}
        - Task: {subagent_type: general-purpose, description: writer, prompt: "look"}
    - say: "root done"
  explore:
    - tools:
        - Bash: {command: `+strconv.Quote(probe)+`}
    - say: "looked"
  general-purpose:
    - tools:
        - Bash: {command: `+strconv.Quote(probe)+`}
    - say: "looked"
`)
			code, out, errs := p.brood(t.Context(), []string{c.env}, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			got := bashOutputs(t, p, "")
			lines := strings.Split(got, "\n")
			if n := countPrefixed(lines, "procs: "); n != 2 {
				t.Fatalf("want both children's listings, got %d:\n%s", n, got)
			}
			if strings.Contains(got, marker) {
				t.Errorf("a child read the command line of a process outside its tree (sleep %s):\n%s", marker, firstLineWith(got, marker))
			}
			if strings.Contains(got, "brood run") || strings.Contains(got, "--permission-mode") {
				t.Errorf("a child read its root's command line:\n%s", firstLineWith(got, "--permission-mode"))
			}
			for _, l := range lines {
				// Its own tree: brood, Bash and the pipeline's few.
				if v, ok := strings.CutPrefix(l, "procs: "); ok {
					if n, err := strconv.Atoi(v); err != nil || n > 20 {
						t.Errorf("a child lists more processes than its own tree: %q", l)
					}
				}
			}
			// Its own ps works and shows its own Bash.
			if countPrefixed(lines, "ps-status: 0") != 2 || !strings.Contains(got, "ps: ") || strings.Contains(got, "lookup self") {
				t.Errorf("a child's ps does not work:\n%s", got)
			}
		})
	}
}

// countPrefixed counts the lines that start with prefix.
func countPrefixed(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// TestAChildReapsTheOrphansHandedToIt (review prochide P2): a child that
// is its PID namespace's init is handed every orphan of its commands (a
// `(cmd &)` in a subshell). It reaps them: none is left a zombie for the
// next command to see (they filled its process limit of 2048 and killed
// it), and the child's own commands' statuses still reach it (the reaper
// takes none of them: a false exit status would say so).
func TestAChildReapsTheOrphansHandedToIt(t *testing.T) {
	for _, c := range containments {
		t.Run(c.name, func(t *testing.T) {
			p := newProject(t, nil)
			spawn := `for i in $(seq 1 300); do (true &); done; echo spawned`
			// Polled, bounded: the reaper runs on SIGCHLD, beside this.
			count := `for i in $(seq 1 400); do n=$(grep -l '^State:[[:space:]]*Z' /proc/[0-9]*/status 2>/dev/null | wc -l); [ "$n" = 0 ] && break; sleep 0.05; done; echo "zombies: $n"; sh -c 'exit 7'; echo "status: $?"`
			mdl := p.script("reap.yaml", `agents:
  root:
    - tools:
        - Task: {subagent_type: general-purpose, description: spawner, prompt: "spawn"}
    - say: "root done"
  general-purpose:
    - tools:
        - Bash: {command: `+strconv.Quote(spawn)+`}
    - tools:
        - Bash: {command: `+strconv.Quote(count)+`}
    - say: "spawned"
`)
			code, out, errs := p.brood(t.Context(), []string{c.env}, "run", "--model", mdl, "--permission-mode", "bypassPermissions", "go")
			if code != 0 || !strings.Contains(out, "root done") {
				t.Fatalf("run: code %d\n%s\n%s", code, out, errs)
			}
			got := bashOutputs(t, p, "")
			if !strings.Contains(got, "spawned") || !strings.Contains(got, "status: 7") {
				t.Fatalf("the child's commands did not run as asked:\n%s", got)
			}
			if !strings.Contains(got, "zombies: 0\n") {
				t.Errorf("the child left its commands' orphans zombies:\n%s", firstLineWith(got, "zombies: "))
			}
		})
	}
}
