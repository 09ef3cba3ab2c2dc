package temporal

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/isolate"
	wf "github.com/broodhq/brood/internal/workflow"
)

// landRepo is a submitter's repository with one commit, its snapshot, a
// change against it that adds one.txt (a call's patch in the store), and
// an engine that lands into it.
type landRepo struct {
	dir   string
	snap  *codesnap.Snapshot
	res   *codesnap.Result
	patch string
	e     *Engine
}

func newLandRepo(t *testing.T) *landRepo {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@e"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	git("init", "-q")
	writeT(t, dir, "a.txt", "committed\n")
	git("add", "-A")
	git("commit", "-qm", "base")
	store, err := blobstore.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	snap, err := codesnap.Capture(ctx, store, dir)
	if err != nil {
		t.Fatal(err)
	}
	// The writer's change as a worker sends it: a binary patch against
	// the snapshot's tree.
	writeT(t, dir, "one.txt", "from the writer\n")
	git("add", "one.txt")
	patch := git("diff", "--cached", "--binary", "--full-index")
	git("rm", "-q", "--cached", "one.txt")
	if err := os.Remove(filepath.Join(dir, "one.txt")); err != nil {
		t.Fatal(err)
	}
	ref, err := store.PutBytes(ctx, []byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	e := New(Config{Code: &CodeConfig{Blobs: store, Dir: dir, StateDir: t.TempDir()}})
	return &landRepo{dir: dir, snap: snap, res: &codesnap.Result{Tree: snap.Tree, Patch: &ref, Files: []string{"one.txt"}}, patch: patch, e: e}
}

func writeT(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (r *landRepo) call(key string) landing {
	return callLanding(key, r.snap, r.res, "general-purpose")
}

// crashMark leaves the record a submitter that died mid-landing leaves:
// the landing marked, not recorded as ended.
func (r *landRepo) crashMark(t *testing.T, key, id string) {
	t.Helper()
	dir, err := landDir(t.Context(), r.dir, key)
	if err == nil {
		err = os.MkdirAll(dir, 0o700)
	}
	if err == nil {
		err = dispatch.WriteJSON(filepath.Join(dir, "landed.json"), &landRecord{Key: key, Landing: id})
	}
	if err != nil {
		t.Fatal(err)
	}
}

func (r *landRepo) one(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, "one.txt"))
	if err != nil {
		t.Fatalf("one.txt: %v", err)
	}
	return string(b)
}

const callRun = "01ARZ3NDEKTSV4RRFFQ69G5FAV-0b8c6f1e-5d2a-4c1b-9a57-3f0e2d9c7b11"

// TestCallLandsOnceUnderItsRecord: a single call's change lands once,
// whoever lands it; a second landing says it is in the tree and writes
// nothing; another workflow run of the task (another key) is its own.
func TestCallLandsOnceUnderItsRecord(t *testing.T) {
	r := newLandRepo(t)
	out := r.e.land(t.Context(), r.call(callRun))
	if out.State != landApplied || !strings.Contains(out.Message, "applied 1 file(s): one.txt") || r.one(t) != "from the writer\n" {
		t.Fatalf("first landing: %+v, one.txt %q", out, r.one(t))
	}
	again := r.e.land(t.Context(), r.call(callRun))
	if again.State != landAlready || r.one(t) != "from the writer\n" {
		t.Fatalf("second landing: %+v, one.txt %q; want already in the tree, nothing written", again, r.one(t))
	}
	rec, err := r.e.readLanded(t.Context(), callRun)
	if err != nil || rec == nil || rec.Done != patchID(r.res) || rec.Landing != "" {
		t.Fatalf("record %+v (%v); want the change done, no landing marked", rec, err)
	}
	if rec, _ := r.e.readLanded(t.Context(), callKey("01ARZ3NDEKTSV4RRFFQ69G5FAV", "another-run")); rec != nil {
		t.Fatalf("another workflow run's record %+v; want none", rec)
	}
}

// TestCrashBetweenLandingAndLanded: a submitter that died after git wrote
// the change and before the record said so left a landing marked; the
// next landing finds the change in the tree (codesnap.InTree for a call,
// codesnap.Landed for a run's tree) and records it, never applying it
// twice. A marker whose change never reached the tree lands it.
func TestCrashBetweenLandingAndLanded(t *testing.T) {
	t.Run("call, written", func(t *testing.T) {
		r := newLandRepo(t)
		r.crashMark(t, callRun, patchID(r.res))
		writeT(t, r.dir, "one.txt", "from the writer\n") // what git wrote before the crash
		out := r.e.land(t.Context(), r.call(callRun))
		if out.State != landApplied || !strings.Contains(out.Message, "landed before its submitter stopped") || r.one(t) != "from the writer\n" {
			t.Fatalf("landing after the crash: %+v, one.txt %q", out, r.one(t))
		}
		if again := r.e.land(t.Context(), r.call(callRun)); again.State != landAlready {
			t.Fatalf("then: %+v; want already in the tree", again)
		}
	})
	t.Run("call, not written", func(t *testing.T) {
		r := newLandRepo(t)
		r.crashMark(t, callRun, patchID(r.res))
		out := r.e.land(t.Context(), r.call(callRun))
		if out.State != landApplied || !strings.Contains(out.Message, "applied 1 file(s): one.txt") || r.one(t) != "from the writer\n" {
			t.Fatalf("landing after the crash: %+v", out)
		}
	})
	t.Run("run", func(t *testing.T) {
		r := newLandRepo(t)
		writeT(t, r.dir, "one.txt", "from the writer\n")
		tip, err := codesnap.Capture(t.Context(), r.e.cfg.Code.Blobs, r.dir) // the run's tree: one.txt added
		if err != nil {
			t.Fatal(err)
		}
		const runID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
		r.crashMark(t, runID, tip.Tree)
		msg := r.e.landRun(t.Context(), RunInput{RunID: runID, Code: r.snap, Tip: tip})
		if !strings.Contains(msg, "landed before its submitter stopped") || r.one(t) != "from the writer\n" {
			t.Fatalf("run landing after the crash: %q, one.txt %q", msg, r.one(t))
		}
		if again := r.e.landRun(t.Context(), RunInput{RunID: runID, Code: r.snap, Tip: tip}); again != alreadyLanded {
			t.Fatalf("then: %q; want %q", again, alreadyLanded)
		}
	})
}

// TestConflictingCallIsKeptNotRetried: a change that does not apply to
// the tree is kept and named, the tree untouched; the next landing says
// so again and never applies it.
func TestConflictingCallIsKeptNotRetried(t *testing.T) {
	r := newLandRepo(t)
	writeT(t, r.dir, "one.txt", "the user's own\n")
	out := r.e.land(t.Context(), r.call(callRun))
	if out.State != landKept || !strings.Contains(out.Message, "does not apply") || r.one(t) != "the user's own\n" {
		t.Fatalf("conflicting landing: %+v, one.txt %q", out, r.one(t))
	}
	if err := os.Remove(filepath.Join(r.dir, "one.txt")); err != nil {
		t.Fatal(err)
	}
	again := r.e.land(t.Context(), r.call(callRun))
	if again.State != landKeptBefore || again.Message != out.Message {
		t.Fatalf("second landing: %+v; want kept before, the same message", again)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "one.txt")); err == nil {
		t.Fatal("the kept change was applied on the second landing")
	}
}

// TestKeptPatchIsUnderTheStateDir (issue 26, item 3): a call's change that
// does not land marks the call's result not applied, and its patch is
// kept under the submitter's state directory (the CLI's is under .brood/)
// as TASK/TASK.patch, named in the result's text.
func TestKeptPatchIsUnderTheStateDir(t *testing.T) {
	r := newLandRepo(t)
	writeT(t, r.dir, "one.txt", "the user's own\n")
	code, err := json.Marshal(r.res)
	if err != nil {
		t.Fatal(err)
	}
	res := &call.Result{Status: dispatch.StatusDone, Code: code}
	r.e.landCall(t.Context(), callRun, r.snap, res, "")
	if res.Patch != call.PatchNotApplied || r.one(t) != "the user's own\n" {
		t.Fatalf("a change that does not land: patch %q, one.txt %q", res.Patch, r.one(t))
	}
	state := r.e.cfg.Code.StateDir
	kept, _ := filepath.Glob(filepath.Join(state, callRun[:26], callRun[:26]+".patch"))
	if len(kept) == 0 || !strings.Contains(res.Text, kept[0]) {
		t.Fatalf("kept patches under %s: %v; the result says %q", state, kept, res.Text)
	}
	os.Remove(filepath.Join(r.dir, "one.txt"))
	clean := &call.Result{Status: dispatch.StatusDone, Code: code}
	r.e.landCall(t.Context(), "01ARZ3NDEKTSV4RRFFQ69G5FAW", r.snap, clean, "")
	if clean.Patch != call.PatchApplied || r.one(t) == "the user's own\n" {
		t.Fatalf("a change that lands: patch %q, one.txt %q", clean.Patch, r.one(t))
	}
	if left, _ := filepath.Glob(filepath.Join(state, "*")); len(left) != 1 {
		t.Fatalf("state directories left: %v; want only the kept one", left)
	}
}

// TestDeniedChangeIsRefusedWhole (review40 P2-F): a worker's change that
// writes a path the submitter's Edit or Write deny rules forbid is not
// landed, a call's or a run's tree: refused whole (an allowed file in it
// too), kept under the state directory, the denied path named; a later
// landing says so again and writes nothing. So is one that writes a path
// the agent's own definition denies (disallowedTools: Edit(one*), as the
// submitter's registry has it: review42 P3-A), as a local writer's
// envelope has both; another agent's rules judge nothing of it.
func TestDeniedChangeIsRefusedWhole(t *testing.T) {
	for _, tc := range []struct {
		name, deny string
		by         string // whose rule: "" the settings', else the agent's definition's
		refused    bool
	}{
		{"call, denied by a pattern", "Edit(one*)", "", true},
		{"call, denied by Write", "Write(one.txt)", "", true},
		{"call, another path denied", "Edit(conf/**)", "", false},
		{"run, denied", "Edit(one*)", "", true},
		{"run, another path denied", "Edit(conf/**)", "", false},
		{"call, denied by the agent's definition", "Edit(one*)", "general-purpose", true},
		{"call, denied by another agent's definition", "Edit(one*)", "explore", false},
		{"run, denied by its agent's definition", "Write(one.txt)", "general-purpose", true},
		{"run, the agent's definition denies another path", "Edit(conf/**)", "general-purpose", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLandRepo(t)
			if tc.by == "" {
				r.e.cfg.Code.WriteDenied = isolate.WriteDeniedFunc(&dispatch.Envelope{
					Permissions: dispatch.Permissions{Deny: []string{tc.deny}}, Workspace: r.dir})
			} else {
				r.e.cfg.Code.AgentDeny = func(agent string) []string {
					if agent == tc.by {
						return []string{tc.deny}
					}
					return nil
				}
			}
			land := func() landOutcome { return r.e.land(t.Context(), r.call(callRun)) }
			if strings.HasPrefix(tc.name, "run") {
				writeT(t, r.dir, "one.txt", "from the writer\n")
				tip, err := codesnap.Capture(t.Context(), r.e.cfg.Code.Blobs, r.dir)
				if err != nil {
					t.Fatal(err)
				}
				os.Remove(filepath.Join(r.dir, "one.txt"))
				const runID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
				plan := &wf.Plan{Phases: []wf.Phase{{ID: "w", Parallel: []wf.Call{{Agent: "general-purpose", Prompt: "write"}}}}}
				land = func() landOutcome {
					return r.e.landRunOut(t.Context(), RunInput{RunID: runID, Code: r.snap, Tip: tip, Plan: plan})
				}
			}
			out := land()
			_, err := os.Stat(filepath.Join(r.dir, "one.txt"))
			if !tc.refused {
				if out.State != landApplied || err != nil {
					t.Fatalf("a change no rule forbids: %+v (one.txt: %v); want it applied", out, err)
				}
				return
			}
			if out.State != landKept || err == nil || !strings.Contains(out.Message, "writes one.txt, which your Edit or Write deny rules forbid") {
				t.Fatalf("a denied change: %+v (one.txt: %v); want it kept, named, not in the tree", out, err)
			}
			kept, _ := filepath.Glob(filepath.Join(r.e.cfg.Code.StateDir, "*", "*.patch"))
			if len(kept) != 1 || !strings.Contains(out.Message, kept[0]) {
				t.Fatalf("kept %v; the message says %q", kept, out.Message)
			}
			if again := land(); again.State != landKeptBefore || again.Message != out.Message {
				t.Fatalf("second landing: %+v; want kept before, the same message", again)
			}
			if _, err := os.Stat(filepath.Join(r.dir, "one.txt")); err == nil {
				t.Fatal("the denied change was applied on the second landing")
			}
		})
	}
}

// TestLandingJudgesTheSubmittersAgent (review fleetnamed P3-1): a call's
// change is judged by the deny rules of the agent its submitter sent,
// whatever agent the result names (an unsigned fleet's completion is
// anyone's to write).
func TestLandingJudgesTheSubmittersAgent(t *testing.T) {
	for _, named := range []string{"explore", ""} {
		r := newLandRepo(t)
		r.e.cfg.Code.AgentDeny = func(agent string) []string {
			if agent == "general-purpose" {
				return []string{"Edit(one*)"}
			}
			return nil
		}
		code, err := json.Marshal(r.res)
		if err != nil {
			t.Fatal(err)
		}
		res := &call.Result{Status: dispatch.StatusDone, Code: code, Agent: named}
		r.e.landCall(t.Context(), callRun, r.snap, res, "general-purpose")
		if _, err := os.Stat(filepath.Join(r.dir, "one.txt")); res.Patch != call.PatchNotApplied || err == nil {
			t.Errorf("result naming agent %q: patch %q, one.txt written: %v; want the submitter's agent's rule to refuse it", named, res.Patch, err == nil)
		}
	}
}
