package temporal

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/taskdir"
)

// specRunner is a call.Runner that is a function.
type specRunner func(context.Context, call.Spec) (*call.Result, error)

func (f specRunner) Call(ctx context.Context, s call.Spec) (*call.Result, error) { return f(ctx, s) }

func seeded(seed byte) *Signer {
	return &Signer{key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))}
}

// testCallInfo is the namespace and workflow the test activity
// environment runs an activity under (what a worker signs for).
func testCallInfo(t *testing.T) CallInfo {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(func(ctx context.Context) (CallInfo, error) { return infoOf(ctx), nil }, activity.RegisterOptions{Name: "probe"})
	v, err := env.ExecuteActivity("probe")
	if err != nil {
		t.Fatal(err)
	}
	var info CallInfo
	if err := v.Get(&info); err != nil {
		t.Fatal(err)
	}
	return info
}

// TestContinuationOnlyFromATrustedWorkersSignature: an attempt given a
// transcript to continue (heartbeat details, or a resumed call's From)
// continues it only when a worker key it trusts (its own, or one it was
// told to) signed it for this very call. Heartbeat details that are not
// are dropped: the call starts over from its brief and its result says
// so. A From that is not is refused, naming the key: for good, unless
// a worker key this one does not trust signed it, which another worker
// of the queue may trust, so it is tried again (brood.Untrusted). The
// continued transcript waits for the child in the task's own directory,
// mode 0600, never in TMPDIR (review15 C6).
func TestContinuationOnlyFromATrustedWorkersSignature(t *testing.T) {
	info := testCallInfo(t)
	own, friend, stranger := seeded(1), seeded(2), seeded(3)
	trusted := NewTrust()
	if err := trusted.Add(friend.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	signAs := func(s *Signer, in CallInfo, hb *Heartbeat) {
		NewWorkerKeys(s, nil).sign(in, hb)
	}
	code := func(n byte) *codesnap.Result {
		return &codesnap.Result{Tree: strings.Repeat(string('a'+rune(n)), 40), Files: []string{"half.txt"}}
	}
	// Heartbeat details are an earlier attempt's of this execution; a
	// From, an earlier execution's.
	earlier := info
	earlier.Attempt--
	otherRun := earlier
	otherRun.Workflow += "-other"
	otherExecution := earlier
	otherExecution.Run += "-other"
	otherSubmitter := earlier
	otherSubmitter.Submitter = Fingerprint(seeded(9).key.Public().(ed25519.PublicKey))
	strangerFP := Fingerprint(stranger.key.Public().(ed25519.PublicKey))
	for _, tc := range []struct {
		name   string
		sign   func(*Heartbeat) // nil: unsigned
		asFrom bool
		want   string // "continued", "over: TEXT" (started over, saying TEXT) or "refused: TEXT"
		local  bool   // this worker has records of the task
		bare   bool   // with From, heartbeat details that name the task alone
	}{
		{"own key", func(hb *Heartbeat) { signAs(own, earlier, hb) }, false, "continued", false, false},
		{"a trusted worker's key", func(hb *Heartbeat) { signAs(friend, earlier, hb) }, false, "continued", false, false},
		{"unsigned", nil, false, "over: started over: attempt 0's transcript was signed by no worker", false, false},
		{"an untrusted worker's key", func(hb *Heartbeat) { signAs(stranger, earlier, hb) }, false, "over: signed by worker key " + strangerFP + ", which is not in this worker's trusted_workers]", false, false},
		{"signed for another run", func(hb *Heartbeat) { signAs(own, otherRun, hb) }, false, "over: not what worker key", false, false},
		{"signed for another submitter", func(hb *Heartbeat) { signAs(own, otherSubmitter, hb) }, false, "over: not what worker key", false, false},
		{"signed in another execution", func(hb *Heartbeat) { signAs(own, otherExecution, hb) }, false, "over: in another execution of run", false, false},
		{"signed by this attempt, not an earlier one", func(hb *Heartbeat) { signAs(own, info, hb) }, false, "over: and attempt 1 continues only an earlier attempt's", false, false},
		{"changed after it was signed", func(hb *Heartbeat) { signAs(own, earlier, hb); hb.Position-- }, false, "over: not what worker key", false, false},
		{"unsigned, with records here", nil, false, "over: attempt 1 continued from this worker's own records of the task: attempt 0's transcript was signed by no worker", true, false},
		{"its partial change dropped", func(hb *Heartbeat) { hb.Code = code(1); signAs(own, earlier, hb); hb.Code = nil }, false, "continued", false, false},
		{"another partial change", func(hb *Heartbeat) { hb.Code = code(1); signAs(own, earlier, hb); hb.Code = code(2) }, false, "over: handed on with a partial change worker key", false, false},
		{"From by a trusted worker", func(hb *Heartbeat) { signAs(friend, otherExecution, hb) }, true, "continued", false, false},
		{"From, details naming the task alone", func(hb *Heartbeat) { signAs(friend, otherExecution, hb) }, true, "continued", false, true},
		{"From of another submitter's call", func(hb *Heartbeat) { signAs(friend, otherSubmitter, hb) }, true, "refused: not what worker key", false, false},
		{"From unsigned", nil, true, "refused: signed by no worker", false, false},
		{"From by an untrusted worker", func(hb *Heartbeat) { signAs(stranger, earlier, hb) }, true,
			"again: the call continues a transcript signed by worker key " + strangerFP + ", which is not in this worker's trusted_workers: it continues only on a worker that trusts the worker that ran it (refused by here); the call is tried again", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			root := t.TempDir()
			store := &DirStore{Dir: t.TempDir()}
			id := dispatch.NewID()
			transcript := []byte(`{"type":"message"}` + "\n")
			ref, err := store.PutBytes(context.Background(), TranscriptObject(id, transcript))
			if err != nil {
				t.Fatal(err)
			}
			hb := Heartbeat{TaskID: id, Worker: "earlier", Transcript: ref, Position: int64(len(transcript))}
			if tc.local {
				td, err := taskdir.Open(root).Task(id)
				if err != nil || td.Create() != nil || td.WriteJSON(taskdir.Envelope, map[string]string{"task_id": id}, false) != nil {
					t.Fatalf("records of task %s here: %v", id, err)
				}
			}
			if tc.sign != nil {
				tc.sign(&hb)
			}
			var seeded string
			a := &Activities{Store: store, ProjectRoot: root, Worker: "here", Keys: NewWorkerKeys(own, trusted),
				Runner: specRunner(func(_ context.Context, s call.Spec) (*call.Result, error) {
					if tc.local && (s.Resume != id || s.Transcript != "") {
						t.Errorf("spec resume %q transcript %q; want the task resumed from its records here", s.Resume, s.Transcript)
					}
					if s.Transcript != "" {
						seeded = s.Transcript
						fi, err := os.Stat(s.Transcript)
						if err != nil || fi.Mode().Perm() != 0o600 {
							t.Errorf("the continued transcript %s: %v %v; want it there, mode 0600", s.Transcript, fi, err)
						}
						if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
							t.Errorf("TMPDIR holds %v while the child runs: every child on the worker reads it", ents)
						}
					}
					return &call.Result{TaskID: s.TaskID, Status: dispatch.StatusDone, Summary: "ran"}, nil
				})}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: CallActivityName})
			in := CallInput{Spec: call.Spec{Agent: "explore", Prompt: "brief", TaskID: id}}
			if tc.asFrom {
				in.From = &hb
				if tc.bare {
					env.SetHeartbeatDetails(Heartbeat{TaskID: id})
				}
			} else {
				env.SetHeartbeatDetails(hb)
			}
			v, err := env.ExecuteActivity(CallActivityName, in)
			kind, text, _ := strings.Cut(tc.want, ": ")
			if tc.want == "continued" {
				kind = "continued"
			}
			if kind == "refused" || kind == "again" {
				// Refused for good, or (a worker key this one does not
				// trust: another of the queue may) tried again.
				want, final := ErrRefused, true
				if kind == "again" {
					want, final = ErrUntrusted, false
				}
				var app *temporal.ApplicationError
				if !errors.As(err, &app) || app.Type() != want || app.NonRetryable() != final || !strings.Contains(err.Error(), text) {
					t.Fatalf("err %v (%T); want %s, final %v, saying %q", err, err, want, final, text)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var out CallOutput
			if err := v.Get(&out); err != nil {
				t.Fatal(err)
			}
			switch kind {
			case "continued":
				if want := filepath.Join(root, ".brood", "dispatch", id, continuedFile); seeded != want {
					t.Errorf("the child was given transcript %q; want it continued from %q, in the task's own directory", seeded, want)
				}
				if strings.Contains(out.Text, "started over") {
					t.Errorf("result text %q says the call started over", out.Text)
				}
			case "over":
				if seeded != "" {
					t.Errorf("the child continued transcript %s; want the call started over from its brief", seeded)
				}
				if !strings.Contains(out.Text, text) {
					t.Errorf("result text %q; want it to say %q", out.Text, text)
				}
			}
			if _, err := os.Stat(filepath.Join(root, ".brood", "dispatch", id)); err == nil && !tc.local {
				t.Errorf("the task's directory is left behind though its task never started there")
			}
		})
	}
}

// TestWorkerKeyIsMadeOnceAndKeptPrivate: a worker's first start makes its
// key (0600, its public line beside it), later starts read the same key,
// a key others can read is refused, and brood fleet keygen --worker's key
// is the one a worker then uses.
func TestWorkerKeyIsMadeOnceAndKeptPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	first, made, err := LoadWorkerKey(dir, "w@host")
	if err != nil || first == nil || !made {
		t.Fatalf("first start: %v made=%v err=%v; want a key made", first, made, err)
	}
	fi, err := os.Stat(filepath.Join(dir, WorkerKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v; want mode 0600", WorkerKeyFile, fi, err)
	}
	pub, err := os.ReadFile(filepath.Join(dir, WorkerPublicKeyFile))
	if err != nil || !strings.HasPrefix(string(pub), first.Public()) {
		t.Fatalf("%s %q, %v; want the key's public line %q", WorkerPublicKeyFile, pub, err, first.Public())
	}
	again, made, err := LoadWorkerKey(dir, "w@host")
	if err != nil || made || again.Public() != first.Public() {
		t.Fatalf("second start: made=%v err=%v, same key %v; want the first key, not a new one", made, err, again != nil && again.Public() == first.Public())
	}
	line, err := GenerateWorkerKey(dir, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if k, _, err := LoadWorkerKey(dir, ""); err != nil || k.Public() != line {
		t.Fatalf("after keygen --worker --force: %v, %v; want its key %q", k, err, line)
	}
	if err := os.Chmod(filepath.Join(dir, WorkerKeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadWorkerKey(dir, ""); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a key others can read: %v; want it refused", err)
	}
	trusted, err := TrustWorkers(dir, []string{line})
	if err != nil || trusted.Len() != 1 {
		t.Fatalf("TrustWorkers: %v, %d key(s); want the flag's", err, trusted.Len())
	}
	if err := os.WriteFile(filepath.Join(dir, TrustedWorkersFile), []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := TrustWorkers(dir, nil); err == nil || !strings.Contains(err.Error(), TrustedWorkersFile+":1") {
		t.Fatalf("a bad trusted_workers line: %v; want it named FILE:LINE", err)
	}
}

// TestWorkerCountsOnlyOtherWorkersKeys (issue 26 F3): a worker whose
// --trusted-worker-key file is the team's, its own key among the others,
// says how many other keys it trusts, never counting its own.
func TestWorkerCountsOnlyOtherWorkersKeys(t *testing.T) {
	own, a, b := seeded(1), seeded(2), seeded(3)
	for _, tc := range []struct {
		name    string
		trusted []*Signer
		want    int
	}{
		{"none", nil, 0},
		{"only its own", []*Signer{own}, 0},
		{"two others", []*Signer{a, b}, 2},
		{"the team's file, its own among them", []*Signer{own, a, b}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "workers.pub")
			var lines []string
			for _, s := range tc.trusted {
				lines = append(lines, s.Public())
			}
			if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var flags []string
			if len(lines) > 0 {
				flags = []string{file}
			}
			tr, err := TrustWorkers("", flags)
			if err != nil {
				t.Fatal(err)
			}
			if got := NewWorkerKeys(own, tr).Trusted(); got != tc.want {
				t.Errorf("other worker keys = %d, want %d", got, tc.want)
			}
		})
	}
}
