package session_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/broodhq/brood/internal/model"
	"github.com/broodhq/brood/internal/session"
)

// crashChildEnv names the transcript a re-executed test binary appends to
// until it is killed.
const crashChildEnv = "BROOD_SESSION_CRASH_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashChildEnv); path != "" {
		os.Exit(crashChild(path))
	}
	if path := os.Getenv(claimChildEnv); path != "" {
		os.Exit(claimChild(path))
	}
	os.Exit(m.Run())
}

// crashChild appends numbered records for ever, reporting each one on
// stdout once Append has returned.
func crashChild(path string) int {
	w, err := session.Open(path, session.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	pad := strings.Repeat("x", 20000) // big lines make a torn write likelier
	for i := 0; ; i++ {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		m := model.Message{Role: role, Content: []model.Part{{Type: model.PartText, Text: strconv.Itoa(i) + " " + pad}}}
		if err := w.Append(session.Record{Type: session.RecMessage, Turn: i, Message: &m}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		fmt.Println(i)
	}
}

func TestKilledWriterLeavesValidPrefix(t *testing.T) {
	for _, killAfter := range []int{1, 37, 250} {
		t.Run(strconv.Itoa(killAfter), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), crashChildEnv+"="+path)
			cmd.Stderr = os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			reported := 0
			for sc.Scan() {
				reported++
				if reported == killAfter {
					break
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("child did not die of SIGKILL: %v", err)
			}
			if reported != killAfter {
				t.Fatalf("child reported %d records before dying, want %d", reported, killAfter)
			}

			recs, bad := readFile(t, path)
			if bad > 1 {
				t.Errorf("%d bad lines; only a torn last line is possible", bad)
			}
			if len(recs) < reported {
				t.Fatalf("%d records on disk, but %d were reported written", len(recs), reported)
			}
			for i, r := range recs {
				if r.Turn != i || !strings.HasPrefix(r.Message.Text(), strconv.Itoa(i)+" ") {
					t.Fatalf("record %d is out of sequence (turn %d)", i, r.Turn)
				}
			}
			st := session.Replay(recs)
			if len(st.Messages) != len(recs) {
				t.Errorf("replay has %d messages, want %d", len(st.Messages), len(recs))
			}
			// The file can be continued: a new record lands on a line of its own.
			w := open(t, path, session.Options{})
			appendAll(t, w, session.Record{Type: session.RecEnd, Status: "done"})
			w.Close()
			after, bad2 := readFile(t, path)
			if len(after) != len(recs)+1 || bad2 != bad || after[len(after)-1].Status != "done" {
				t.Errorf("after continuing: %d records (%d bad), want %d (%d bad)", len(after), bad2, len(recs)+1, bad)
			}
		})
	}
}
