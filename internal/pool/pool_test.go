package pool

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/depth"
	"github.com/broodhq/brood/internal/dispatch"
)

// TestMain lets the test binary play a child process: POOL_CHILD names the
// behaviour.
func TestMain(m *testing.M) {
	if mode := os.Getenv("POOL_CHILD"); mode != "" {
		if strings.HasPrefix(mode, "warm") {
			warmChild(mode)
		}
		child(mode)
		return
	}
	os.Exit(m.Run())
}

func child(mode string) {
	switch mode {
	case "spawner":
		spawnerMain() // forkserver_linux_test.go
	case "ok":
		fmt.Println(`{"ping":true}`)
		fmt.Println(`{"type":"progress","tools":["Read"]}`)
		fmt.Fprintln(os.Stderr, "some log line")
		os.Exit(0)
	case "silent":
		time.Sleep(time.Hour) // alive but says nothing: the lifeguard's case
	case "pinging":
		for {
			fmt.Println(`{"ping":true}`)
			time.Sleep(20 * time.Millisecond)
		}
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		for {
			fmt.Println(`{"ping":true}`)
			time.Sleep(20 * time.Millisecond)
		}
	case "graceful":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		fmt.Println(`{"type":"ready"}`)
		<-ch
		fmt.Println(`{"type":"result","status":"cancelled"}`)
		os.Exit(0)
	case "pid":
		// Its pid as it sees it: 1 as the init of a PID namespace.
		fmt.Printf(`{"type":"pid","pid":%d}`+"\n", os.Getpid())
		os.Exit(0)
	case "crash":
		fmt.Fprintln(os.Stderr, "panic: boom")
		os.Exit(3)
	case "chatty":
		for i := range 20000 {
			fmt.Printf(`{"type":"progress","n":%d}`+"\n", i)
		}
		os.Exit(0)
	case "echo":
		// The parent-to-child direction: every stdin line comes back.
		fmt.Println(`{"ping":true}`)
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if sc.Text() == "bye" {
				os.Exit(0)
			}
			fmt.Println(`{"echo":` + strconv.Quote(sc.Text()) + `}`)
		}
		os.Exit(0)
	case "grandchild":
		// A grandchild in the same group that would outlive us.
		c := exec.Command("sleep", os.Getenv("POOL_SLEEP"))
		if err := c.Start(); err != nil {
			os.Exit(9)
		}
		fmt.Println(`{"type":"started"}`)
		os.Exit(0)
	case "escape":
		// A grandchild that leaves the session and holds our stdout: the
		// attack of issue 10 case 3.
		c := exec.Command("setsid", "-f", "sh", "-c", "exec sleep "+os.Getenv("POOL_SLEEP"))
		c.Stdout = os.Stdout
		if err := c.Run(); err != nil {
			os.Exit(9)
		}
		fmt.Println(`{"type":"escaped"}`)
		if os.Getenv("POOL_HANG") == "1" {
			signal.Ignore(syscall.SIGTERM)
			time.Sleep(time.Hour)
		}
		os.Exit(0)
	case "nsowner":
		nsOwnerMain() // taskkill_linux_test.go
	}
	os.Exit(100)
}

func job(t *testing.T, mode string, extraEnv ...string) (testJob, *[]string) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), "POOL_CHILD="+mode), extraEnv...)
	var lines []string
	return testJob{
		Job: Job{
			ID:      mode,
			Cmd:     cmd,
			Confine: Unconfined{},
		},
		OutputPath: filepath.Join(t.TempDir(), "output.json"),
		lines:      &lines,
	}, &lines
}

func TestRunOutcomes(t *testing.T) {
	cases := []struct {
		mode     string
		cfg      Config
		timeout  time.Duration
		cancel   bool
		killedBy string
		exit     int
		signal   string
		stderr   string
		lines    int
	}{
		{mode: "ok", killedBy: KilledByNone, exit: 0, stderr: "some log line", lines: 1},
		{mode: "crash", killedBy: KilledByNone, exit: 3, stderr: "panic: boom"},
		{mode: "silent", cfg: Config{HeartbeatTimeout: 300 * time.Millisecond}, killedBy: KilledByLifeguard, exit: -1, signal: "killed"},
		{mode: "pinging", cfg: Config{HeartbeatTimeout: 5 * time.Second}, timeout: 300 * time.Millisecond, killedBy: KilledByTimeout, exit: -1, signal: "terminated"},
		{mode: "stubborn", cfg: Config{HeartbeatTimeout: 5 * time.Second, KillGrace: 200 * time.Millisecond}, timeout: 200 * time.Millisecond, killedBy: KilledByTimeout, exit: -1, signal: "killed"},
		{mode: "graceful", cfg: Config{KillGrace: 5 * time.Second}, cancel: true, killedBy: KilledByCancel, exit: 0, lines: 2},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			p := New(c.cfg)
			j, lines := job(t, c.mode)
			j.Timeout = c.timeout
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if c.cancel {
				// Cancel once the child has said it is ready for SIGTERM.
				j.OnLine = func(b []byte) {
					if strings.Contains(string(b), "ready") {
						cancel()
					}
				}
			}
			out, err := j.run(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if out.KilledBy != c.killedBy || out.ExitCode != c.exit || out.Signal != c.signal {
				t.Fatalf("got killed_by=%s exit=%d signal=%q, want %s %d %q", out.KilledBy, out.ExitCode, out.Signal, c.killedBy, c.exit, c.signal)
			}
			if !strings.Contains(out.StderrTail, c.stderr) {
				t.Errorf("stderr tail %q lacks %q", out.StderrTail, c.stderr)
			}
			if len(*lines) != c.lines {
				t.Errorf("got %d event lines %q, want %d (pings are not events)", len(*lines), *lines, c.lines)
			}
			var disk dispatch.Output
			if err := dispatch.ReadJSON(j.OutputPath, &disk); err != nil || disk.PID != out.PID || disk.KilledBy != out.KilledBy {
				t.Fatalf("output.json: %+v, %v", disk, err)
			}
		})
	}
}

func TestGrandchildIsReaped(t *testing.T) {
	dur := uniqueSleep()
	j, _ := job(t, "grandchild", "POOL_SLEEP="+dur)
	if _, err := j.run(context.Background(), New(Config{KillGrace: time.Second})); err != nil {
		t.Fatal(err)
	}
	// The grandchild was SIGKILLed with the child's cgroup, namespace or
	// group; once reaped it is gone, or at worst a zombie no longer ours.
	for _, pid := range procsWith(dur) {
		waitGone(t, pid)
	}
}

// TestRunRefusesUnconfined: a job without a Confiner never starts, so no
// class of child can be started without its confinement by a caller that
// forgot it.
func TestRunRefusesUnconfined(t *testing.T) {
	j, _ := job(t, "ok")
	j.Confine = nil
	out, err := j.run(context.Background(), New(Config{}))
	if !errors.Is(err, ErrUnconfined) || out != nil || j.Cmd.Process != nil {
		t.Fatalf("Run without a Confiner: %v, %v, started %v", out, err, j.Cmd.Process != nil)
	}
	if _, err := New(Config{}).Prestart(context.Background(), exec.Command(os.Args[0]), depth.Marker{}, nil); !errors.Is(err, ErrUnconfined) {
		t.Fatalf("Prestart without a Confiner: %v", err)
	}
}

// TestProcessHandle: Start hands back a running Process: its lines in
// order with heartbeats marked, what Send writes reaches the child's stdin,
// Wait says how it ended, and Send after its end fails.
func TestProcessHandle(t *testing.T) {
	j, _ := job(t, "echo")
	h, err := New(Config{}).Start(t.Context(), j.Job)
	if err != nil {
		t.Fatal(err)
	}
	if h.PID() <= 0 || h.Started().IsZero() {
		t.Fatalf("a started process has pid %d, started %v", h.PID(), h.Started())
	}
	var got []string
	pings := 0
	for l := range h.Lines() {
		if l.Ping {
			pings++
			if err := h.Send([]byte("one\n")); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got = append(got, string(l.Text))
		if len(got) == 1 {
			if err := h.Send([]byte("two\nbye\n")); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := h.Wait()
	if want := []string{`{"echo":"one"}`, `{"echo":"two"}`}; pings != 1 || !slices.Equal(got, want) {
		t.Fatalf("lines %q with %d pings, want %q and one ping", got, pings, want)
	}
	if out.ExitCode != 0 || out.KilledBy != KilledByNone || out.PID != h.PID() {
		t.Fatalf("ended %+v", out)
	}
	select {
	case <-h.Done():
	default:
		t.Fatal("Done is open after Wait returned")
	}
	if err := h.Send([]byte("late\n")); !errors.Is(err, ErrExited) {
		t.Fatalf("Send after the end: %v, want ErrExited", err)
	}
	if again := h.Wait(); again != out {
		t.Fatal("a second Wait says something else")
	}
}

// TestRunUnreadLines: a caller that never reads a process's lines (Run,
// Wait alone) never keeps a chatty child blocked on a full pipe.
func TestRunUnreadLines(t *testing.T) {
	j, _ := job(t, "chatty")
	out, err := New(Config{}).Run(t.Context(), j.Job)
	if err != nil {
		t.Fatal(err)
	}
	if out.ExitCode != 0 || out.KilledBy != KilledByNone {
		t.Fatalf("a chatty child whose lines nobody read ended %+v", out)
	}
}
