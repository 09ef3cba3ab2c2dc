package trust

import (
	"slices"
	"strings"
	"testing"
)

// TestLineCommandsOutputAndJobs (evidence3): each command of a line says
// whether its output reaches the line's (hidden by a redirection, its
// group's or a substitution), what it is piped through, and whether it
// leaves a job running by nohup, setsid or disown in command position
// (not as an argument: grep setsid file).
func TestLineCommandsOutputAndJobs(t *testing.T) {
	for _, tc := range []struct {
		line, cmd string
		hidden    bool
		pipe      string
		detaches  bool
	}{
		{"go test ./...", "go test ./...", false, "", false},
		{"go test ./... >/dev/null; go test ./ok/", "go test ./...", true, "", false},
		{"go test ./... >/dev/null; go test ./ok/", "go test ./ok/", false, "", false},
		{"go test ./... 2>&1 >/dev/null", "go test ./...", true, "", false},
		{"go test ./... >/dev/null 2>&1", "go test ./...", true, "", false},
		{"go test ./... &>/dev/null", "go test ./...", true, "", false},
		{"go test ./... >&2", "go test ./...", false, "", false},
		{"go test ./... > log.txt", "go test ./...", true, "", false},
		{"{ go test ./...; } > /dev/null", "go test ./...", true, "", false},
		{"x=$(go test ./...)", "go test ./...", true, "", false},
		{"go test ./... 2>&1 | grep -v FAIL", "go test ./...", false, "grep -v FAIL", false},
		{"go test ./... | tee log | tail -n 20", "go test ./...", false, "tee log|tail -n 20", false},
		{"go test ./... | tee log | tail -n 20", "tee log", false, "tail -n 20", false},
		{"grep setsid notes.txt", "grep setsid notes.txt", false, "", false},
		{"setsid -f sh -c 'sleep 9'", "sh -c sleep 9", false, "", true},
		{"timeout 5 nohup ./w.sh", "./w.sh", false, "", true},
		{"sleep 9 & disown", "disown", false, "", true},
		{"echo nohup", "echo nohup", false, "", false},
		{"find . -name x -exec setsid sh -c 'sleep 9' ';'", "find . -name x -exec setsid sh -c sleep 9 ;", false, "", true},
		// a detach word anywhere, unless the program only reads text (review
		// evidence3 P2-5)
		{"flock /tmp/l setsid sh -c 'sleep 30; echo x >> a.go'", "flock /tmp/l setsid sh -c sleep 30; echo x >> a.go", false, "", true},
		{"unshare -U setsid sh -c 'sleep 9'", "unshare -U setsid sh -c sleep 9", false, "", true},
		{"chroot / setsid sh -c 'sleep 9'", "chroot / setsid sh -c sleep 9", false, "", true},
		{"busybox setsid sh -c 'sleep 9'", "busybox setsid sh -c sleep 9", false, "", true},
		{"parallel setsid ::: a", "parallel setsid ::: a", false, "", true},
		{"watch setsid x", "watch setsid x", false, "", true},
		{"echo a | xargs setsid touch", "touch", false, "", true},
		{"sudo setsid x", "x", false, "", true},
		{"env -S 'setsid x'", "env -S 'setsid x'", false, "", true},
		{"script -c 'setsid x'", "script -c setsid x", false, "", true},
		{"grep -rn nohup internal/", "grep -rn nohup internal/", false, "", false},
		{"rg --pre setsid x .", "rg --pre setsid x .", false, "", true},
		{"sed -n /setsid/p notes.txt", "sed -n /setsid/p notes.txt", false, "", false},
		{"sed -n 's/a/setsid x/e' notes.txt", "sed -n s/a/setsid x/e notes.txt", false, "", true},
		{"awk '/nohup/' notes.txt", "awk /nohup/ notes.txt", false, "", false},
		{"awk '{system(\"setsid x\")}' notes.txt", "awk {system(\"setsid x\")} notes.txt", false, "", true},
		{"printf '%s\\n' disown", "printf %s\\n disown", false, "", false},
	} {
		cmds, ok := LineCommands(tc.line)
		if !ok {
			t.Fatalf("%q does not parse", tc.line)
		}
		i := slices.IndexFunc(cmds, func(c LineCommand) bool { return c.Words == tc.cmd })
		if i < 0 {
			t.Fatalf("%q: no command %q in %+v", tc.line, tc.cmd, cmds)
		}
		c := cmds[i]
		if c.Hidden != tc.hidden || strings.Join(c.Pipe, "|") != tc.pipe || c.Detaches != tc.detaches {
			t.Errorf("%q: %q hidden %v pipe %q detaches %v; want %v %q %v", tc.line, tc.cmd, c.Hidden, strings.Join(c.Pipe, "|"), c.Detaches, tc.hidden, tc.pipe, tc.detaches)
		}
	}
}

// TestStatusCommandsPipefail (evidence3): after set -o pipefail a
// pipeline's status is every element's, so each is a status command.
func TestStatusCommandsPipefail(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"go test ./... | tail -n 20", "tail -n 20"},
		{"set -o pipefail; go test ./... | tail -n 20", "go test ./...|tail -n 20"},
		{"set -euo pipefail && go test ./... 2>&1 | tee /tmp/log", "set -euo pipefail|go test ./...|tee /tmp/log"},
		{"set -o pipefail; set +o pipefail; go test ./... | tail", "tail"},
		{"(set -o pipefail); go test ./... | tail", "tail"},
		// set reads options up to --, - or its first operand, as bash does
		// (review evidence3 P1-1).
		{"set -- -o pipefail; sh fail.sh 2>&1 | tail -n 0", "tail -n 0"},
		{"set x -o pipefail; go test ./... | tail", "tail"},
		{"set - -o pipefail; go test ./... | tail", "tail"},
		{"set -e -- -o pipefail; go test ./... | tail", "tail"},
		{"set -o nosuch -o pipefail; go test ./... | tail", "tail"},
		{"set -Z -o pipefail; go test ./... | tail", "tail"},
		{"set -o pipefail +o pipefail; go test ./... | tail", "tail"},
		{"set -o pipefail -- x; go test ./... | tail", "go test ./...|tail"},
		{"set -e -o errexit -o pipefail x; go test ./... | tail", "go test ./...|tail"},
		{"set -- -o pipefail && go test ./... | grep -v FAIL", "set -- -o pipefail|grep -v FAIL"},
	} {
		if got := strings.Join(StatusCommands(tc.line), "|"); got != tc.want {
			t.Errorf("%q: status commands %q, want %q", tc.line, got, tc.want)
		}
	}
}
