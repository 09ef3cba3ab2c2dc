package tool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// waitGone blocks until the process pid has exited (or the deadline
// passes), using a pidfd: it becomes readable when the process ends, so the
// test needs no polling. A pid that no longer exists is already gone.
func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer unix.Close(fd)
	n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(within.Milliseconds()))
	if err != nil || n != 1 {
		t.Fatalf("process %d still alive %v after the command ended (poll: %d, %v)", pid, within, n, err)
	}
}

var pidLine = regexp.MustCompile(`pid=(\d+)`)

func grandchildPID(t *testing.T, out string) int {
	t.Helper()
	m := pidLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pid in output %q", out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

func TestBashBasics(t *testing.T) {
	dir := t.TempDir()
	env := &Env{Dir: dir}
	tests := []struct {
		name    string
		in      map[string]any
		wantErr bool
		want    []string
	}{
		{name: "output and workdir", in: map[string]any{"command": "pwd; echo out; echo err >&2"}, want: []string{dir + "\n", "out\n", "err\n"}},
		{name: "exit code", in: map[string]any{"command": "echo before; exit 3"}, wantErr: true, want: []string{"before\n", "Exit code 3"}},
		{name: "no output", in: map[string]any{"command": "true"}, want: []string{"(no output"}},
		{name: "stdin is empty", in: map[string]any{"command": "cat; echo done"}, want: []string{"done"}},
		{name: "signal", in: map[string]any{"command": "kill -TERM $$"}, wantErr: true, want: []string{"killed by signal terminated"}},
		{name: "timeout capped", in: map[string]any{"command": "echo hi", "timeout": 9e9}, want: []string{"timeout lowered to the maximum", "hi"}},
		{name: "empty command", in: map[string]any{"command": "  "}, wantErr: true, want: []string{"command is empty"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, &Bash{}, env, tt.in)
			if res.IsError != tt.wantErr {
				t.Fatalf("IsError = %v: %q", res.IsError, res.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result %q does not contain %q", res.Content, w)
				}
			}
		})
	}
}

func TestBashTimeoutKillsGroup(t *testing.T) {
	env := &Env{Dir: t.TempDir()}
	start := time.Now()
	// The backgrounded sleep inherits stdout: if only the shell were
	// killed, the pipe would stay open for 60 s.
	res := run(t, &Bash{}, env, map[string]any{"command": "sleep 60 & echo pid=$!; sleep 60", "timeout": 300})
	elapsed := time.Since(start)
	if !res.IsError || !strings.Contains(res.Content, "timed out after 300ms") {
		t.Fatalf("result %q", res.Content)
	}
	if elapsed > bashWaitDelay+time.Second {
		t.Fatalf("took %v: the process group was not killed", elapsed)
	}
	waitGone(t, grandchildPID(t, res.Content), 5*time.Second)
}

func TestBashEnvTimeoutAndCancel(t *testing.T) {
	env := &Env{Dir: t.TempDir(), BashTimeout: 200 * time.Millisecond}
	res := run(t, &Bash{}, env, map[string]any{"command": "sleep 30"})
	if !res.IsError || !strings.Contains(res.Content, "timed out after 200ms") {
		t.Fatalf("env timeout: %q", res.Content)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res = (&Bash{}).Run(ctx, &Env{Dir: t.TempDir()}, bashIn("sleep 30"))
	if !res.IsError || !strings.Contains(res.Content, "cancelled") {
		t.Fatalf("cancelled: %q", res.Content)
	}
}

func TestBashBackgroundHoldingPipe(t *testing.T) {
	// The shell exits at once, but a background child keeps the output
	// pipe: the call must still end (after WaitDelay) and end the child.
	res := run(t, &Bash{}, &Env{Dir: t.TempDir()}, map[string]any{"command": "sleep 60 & echo pid=$!"})
	if res.IsError || !strings.Contains(res.Content, "background processes") {
		t.Fatalf("result %q", res.Content)
	}
	waitGone(t, grandchildPID(t, res.Content), 5*time.Second)
}

func TestBashCappedOutput(t *testing.T) {
	out := t.TempDir()
	env := &Env{Dir: t.TempDir(), OutputDir: filepath.Join(out, "sub"), OutputLimit: 1000}
	res := run(t, &Bash{}, env, map[string]any{"command": "seq 1 10000"})
	if res.IsError {
		t.Fatalf("error: %q", res.Content)
	}
	want, err := exec.Command("seq", "1", "10000").Output()
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) > 1300 {
		t.Errorf("inline result is %d bytes, limit 1000", len(res.Content))
	}
	if !strings.HasPrefix(res.Content, "1\n2\n3\n") || !strings.HasSuffix(res.Content, "9999\n10000\n") {
		t.Errorf("head or tail missing:\n%s", res.Content)
	}
	m := regexp.MustCompile(`\[(\d+) bytes cut from the middle; the whole output \((\d+) bytes\) is in (\S+);`).FindStringSubmatch(res.Content)
	if m == nil {
		t.Fatalf("no cut note in %q", res.Content)
	}
	if m[2] != strconv.Itoa(len(want)) {
		t.Errorf("total = %s, want %d", m[2], len(want))
	}
	saved, err := os.ReadFile(m[3])
	if err != nil || !bytes.Equal(saved, want) {
		t.Fatalf("saved file %s: %d bytes, err %v; want the whole %d bytes", m[3], len(saved), err, len(want))
	}
	if !strings.HasPrefix(m[3], env.OutputDir) {
		t.Errorf("saved outside OutputDir: %s", m[3])
	}
	cut, _ := strconv.Atoi(m[1])
	shown := len(res.Content) - len(m[0])
	if cut+shown < len(want)-200 || cut > len(want) {
		t.Errorf("cut %d + shown ~%d does not account for %d bytes", cut, shown, len(want))
	}
}

func TestBashRedactsSecrets(t *testing.T) {
	const secret = "sk-test-0123456789abcdef"
	t.Setenv("MY_SERVICE_TOKEN", secret)
	t.Setenv("ANTHROPIC_API_KEY", "ant-"+secret)
	t.Setenv("HARMLESS", secret+"-not")
	for _, limit := range []int{0, 64} { // inline and spilled to a file
		env := &Env{Dir: t.TempDir(), OutputDir: t.TempDir(), OutputLimit: limit}
		res := run(t, &Bash{}, env, map[string]any{"command": `echo "t=$MY_SERVICE_TOKEN"; printf '%s' "$ANTHROPIC_API_KEY"; echo; seq 1 40`})
		if strings.Contains(res.Content, "0123456789abcdef") {
			t.Fatalf("limit %d: secret leaked: %q", limit, res.Content)
		}
		// brood's own provider key is not even in the command's environment.
		if limit == 0 && (!strings.Contains(res.Content, "t=[REDACTED:MY_SERVICE_TOKEN]") || strings.Contains(res.Content, "ant-") || strings.Contains(res.Content, "ANTHROPIC_API_KEY")) {
			t.Fatalf("not redacted: %q", res.Content)
		}
		files, _ := filepath.Glob(filepath.Join(env.OutputDir, "*"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			if bytes.Contains(data, []byte("0123456789abcdef")) {
				t.Fatalf("secret leaked into %s", f)
			}
		}
		if limit > 0 && len(files) != 1 {
			t.Fatalf("want one saved output file, got %v", files)
		}
	}
}
