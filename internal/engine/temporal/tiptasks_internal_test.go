package temporal

import (
	"crypto/ed25519"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/codesnap"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestTipSignsItsWriters: a chain step's tip names, signed, the writers
// whose changes are in it: the previous tip's list (vouchTip) and its own
// unless it conflicted; a list changed since, or a v2 signature passed
// off as v1, is refused; a v1 tip a worker signed before still checks (it
// names no writers).
func TestTipSignsItsWriters(t *testing.T) {
	w := seeded(7)
	keys := NewWorkerKeys(w, nil)
	trust := NewTrust()
	if err := trust.Add(w.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	rt := NewResultTrust(trust, "trusted_workers")
	const run, t1, t2 = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W", "01M94GP8WHCA3G6AZ1AHXZK69W"
	info := CallInfo{Namespace: DefaultNamespace, Workflow: run, Run: "E1", Attempt: 1}
	tip1 := &codesnap.Snapshot{Tree: strings.Repeat("c", 40), Base: strings.Repeat("b", 40), ObjectFormat: "sha1"}
	sig1 := keys.signTip(info, "w1", t1, tip1, tipTasks(t1, nil, &codesnap.Chained{Applied: true}), "", "")
	v1 := &TipSig{Key: w.key.Public().(ed25519.PublicKey), Worker: "w1", Task: t1, Attempt: 1, Run: "E1"}
	v1.Sig = ed25519.Sign(w.key, tipClaimOf(DefaultNamespace, run, "", tip1, v1))
	applied, conflict := &codesnap.Chained{Applied: true, Files: []string{"c.txt"}}, &codesnap.Chained{Files: []string{"c.txt"}, Conflict: "patch does not apply"}
	for _, tc := range []struct {
		name  string
		prev  []string
		ch    *codesnap.Chained
		tasks []string
	}{
		{"after a tip with a writer", []string{t1}, applied, []string{t1, t2}},
		{"on the start", nil, applied, []string{t2}},
		{"its change in conflict (the tip unchanged)", []string{t1}, conflict, []string{t1}},
		{"its change in conflict on the base", nil, conflict, nil},
	} {
		if got := tipTasks(t2, tc.prev, tc.ch); !slices.Equal(got, tc.tasks) {
			t.Errorf("%s: the next tip names %v; want %v", tc.name, got, tc.tasks)
		}
	}
	if !slices.Equal(sig1.Tasks, []string{t1}) {
		t.Errorf("the first tip names %v; want [%s]", sig1.Tasks, t1)
	}
	changed := *sig1
	changed.Tasks = []string{t1, t2}
	down := *sig1
	down.V, down.Tasks = 1, nil
	for _, tc := range []struct {
		name string
		s    *TipSig
		ok   bool
	}{
		{"as signed", sig1, true},
		{"v1 signed before", v1, true},
		{"its writers changed", &changed, false},
		{"v2 passed off as v1", &down, false},
	} {
		if err := rt.checkTip(DefaultNamespace, run, "E1", "", tip1, tc.s); (err == nil) != tc.ok {
			t.Errorf("%s: checkTip: %v; want ok %v", tc.name, err, tc.ok)
		}
	}
}

// TestChainVouchesForItsTip: a chain step builds only on the tree the
// signed submission starts the execution from, or on a tip a key of the
// run's signed worker set (or its own) signed in this execution for this
// submitter, whose list it then carries; a tree of anyone's making, a key
// only the worker trusts, another execution's or submitter's tip, and in
// a run that signs its workers a v1 tip, are refused (review25 P1-3,
// P2-2, P2-3, P3-1).
func TestChainVouchesForItsTip(t *testing.T) {
	own, peer, local := seeded(7), seeded(8), seeded(9)
	pub := func(s *Signer) []byte { return s.key.Public().(ed25519.PublicKey) }
	trusted := NewTrust()
	if err := trusted.Add(local.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	const run, t1, t2 = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W", "01M94GP8WHCA3G6AZ1AHXZK69W"
	info := CallInfo{Namespace: DefaultNamespace, Workflow: run, Run: "E1", Submitter: "SHA256:me", Attempt: 1}
	snap := func(c byte) *codesnap.Snapshot {
		return &codesnap.Snapshot{Tree: strings.Repeat(string(c), 40), Base: strings.Repeat("b", 40), ObjectFormat: "sha1"}
	}
	code, resumed, tip, evil := snap('a'), snap('d'), snap('c'), snap('e')
	otherBase := snap('a')
	otherBase.Base = strings.Repeat("f", 40)
	sign := func(s *Signer, in CallInfo, tree *codesnap.Snapshot, v int) *TipSig {
		if v < 2 {
			sig := &TipSig{Key: pub(s), Worker: "w", Task: t1, Attempt: 1, Run: in.Run}
			sig.Sig = ed25519.Sign(s.key, tipClaimOf(in.Namespace, in.Workflow, in.Submitter, tree, sig))
			return sig
		}
		return NewWorkerKeys(s, nil).signTip(in, "w", t1, tree, []string{t1}, "", "")
	}
	other, stranger := info, info
	other.Run, stranger.Submitter = "E0", "SHA256:someone"
	signedSet := &Submission{Workflow: run, Code: code, Workers: &WorkerSet{Keys: [][]byte{pub(peer)}}}
	resume := &Submission{Workflow: run, Code: code, Tip: resumed, Workers: signedSet.Workers}
	before := &Submission{Workflow: run, Code: code}
	for _, tc := range []struct {
		name  string
		sub   *Submission
		tip   *codesnap.Snapshot
		sig   *TipSig
		from  *codesnap.Snapshot
		tasks []string
		why   string // "": built on
	}{
		{"the run's start", signedSet, code, nil, code, nil, ""},
		{"a resume's start", resume, resumed, nil, resumed, nil, ""},
		{"the first start on a resume", resume, code, nil, nil, nil, notVouched},
		{"a tree of anyone's making", signedSet, evil, nil, nil, nil, notVouched},
		{"the start's tree on another base", signedSet, otherBase, nil, nil, nil, notVouched},
		{"no tree", signedSet, nil, nil, nil, nil, notVouched},
		{"its own tip", signedSet, tip, sign(own, info, tip, 2), tip, []string{t1}, ""},
		{"a tip of the run's signed set", signedSet, tip, sign(peer, info, tip, 2), tip, []string{t1}, ""},
		{"a tip of a key only the worker trusts", signedSet, tip, sign(local, info, tip, 2), nil, nil, notVouched},
		{"another execution's tip", signedSet, tip, sign(own, other, tip, 2), nil, nil, notVouched},
		{"another submitter's tip", signedSet, tip, sign(own, stranger, tip, 2), nil, nil, notVouched},
		{"a tip signed over another tree", signedSet, evil, sign(own, info, tip, 2), nil, nil, notVouched},
		{"a signed tip whose tree is the start", signedSet, code, sign(own, info, code, 2), code, []string{t1}, ""},
		{"another execution's tip on the start", signedSet, code, sign(own, other, code, 2), code, nil, ""},
		{"a v1 tip in a run that signs its workers", signedSet, tip, sign(own, info, tip, 1), nil, nil, "from before tip lists, which does not say which writers' changes are in it: nothing chained; upgrade every worker, then run the plan again"},
		{"a v1 tip in a run from before lists", before, tip, sign(own, info, tip, 1), tip, nil, ""},
		{"a run from before lists: a key the worker trusts", before, tip, sign(local, info, tip, 2), tip, []string{t1}, ""},
		{"a run from before lists: an unknown key", before, tip, sign(peer, info, tip, 2), nil, nil, notVouched},
	} {
		from, tasks, err := vouchTip(info, tc.sub, pub(own), trusted, t2, tc.tip, tc.sig)
		switch {
		case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("%s: built on (err %v); want refused: %s", tc.name, err, tc.why)
		case tc.why == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.name, err)
		case from != tc.from || !slices.Equal(tasks, tc.tasks):
			t.Errorf("%s: builds on %v with %v; want %v with %v", tc.name, from, tasks, tc.from, tc.tasks)
		}
	}
}

// TestOneChainStepPerWriter: a run's chain steps are bounded by its
// writers: the first step for a writer task claims it in the fleet store,
// a Temporal retry of that step (same execution, activity id and input,
// on any worker) passes, and any other step for the same task is refused
// (review25 P3-3).
func TestOneChainStepPerWriter(t *testing.T) {
	user := seeded(4)
	trust := NewTrust()
	if err := trust.Add(user.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	store, err := blobstore.Open(t.Context(), "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := user.Sign(Submission{Kind: "plan", Workflow: "W", Queue: "q", At: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	const t1, t2 = "01M94GP8WHCA3G6AZ1AHXZK68W", "01M94GP8WHCA3G6AZ1AHXZK69W"
	info := CallInfo{Namespace: DefaultNamespace, Workflow: "W", Run: "E1"}
	step := ChainInput{TaskID: t1, Signed: s, Tip: &codesnap.Snapshot{Tree: strings.Repeat("a", 40)}}
	forged := step
	forged.Tip = &codesnap.Snapshot{Tree: strings.Repeat("e", 40)}
	bad := step
	bad.TaskID = "../calls/1"
	worker := func() *Activities { return &Activities{Trust: trust, Store: store} }
	first := worker()
	for _, tc := range []struct {
		name string
		a    *Activities
		in   ChainInput
		id   string
		ok   bool
	}{
		{"the first step of the writer", first, step, "7", true},
		{"its retry on the same worker", first, step, "7", true},
		{"its retry on another worker", worker(), step, "7", true},
		{"another writer's step", first, ChainInput{TaskID: t2, Signed: s, Tip: step.Tip}, "9", true},
		{"the same step again under another activity id", worker(), step, "8", false},
		{"another tip for the same writer", worker(), forged, "7", false},
		{"a step naming no task", worker(), bad, "10", false},
	} {
		err := tc.a.claimChain(t.Context(), tc.in, info, tc.id)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v; want ok %v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.As(err, new(refused)) {
			t.Errorf("%s: %v is not a refusal (it would be tried again)", tc.name, err)
		}
	}
}

// TestSubmitterTakesTipLists: the submitter takes a tip signed with its
// list as the answer even when its tree is the start (two writers whose
// changes cancel out are both in it), and the start rule (every writer
// not in it) only for an unsigned tip; a v1 tip (no list) is refused in a
// run whose submission signs its workers, and not checked in one from
// before (review25 P3-1, P2-2).
func TestSubmitterTakesTipLists(t *testing.T) {
	w := seeded(7)
	keys := NewWorkerKeys(w, nil)
	trust := NewTrust()
	if err := trust.Add(w.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	e := New(Config{Workers: NewResultTrust(trust, "trusted_workers")})
	const run, t1, t2 = "01M94GP8WHCA3G6AZ1AHXZK600", "01M94GP8WHCA3G6AZ1AHXZK68W", "01M94GP8WHCA3G6AZ1AHXZK69W"
	info := CallInfo{Namespace: DefaultNamespace, Workflow: run, Run: "E1", Attempt: 1}
	start := &codesnap.Snapshot{Tree: strings.Repeat("a", 40), Base: strings.Repeat("b", 40), ObjectFormat: "sha1"}
	tip := &codesnap.Snapshot{Tree: strings.Repeat("c", 40), Base: start.Base, ObjectFormat: "sha1"}
	v1 := func(tree *codesnap.Snapshot) *TipSig {
		s := &TipSig{Key: w.key.Public().(ed25519.PublicKey), Worker: "w", Task: t2, Attempt: 1, Run: "E1"}
		s.Sig = ed25519.Sign(w.key, tipClaimOf(DefaultNamespace, run, "", tree, s))
		return s
	}
	code := []byte(`{"tree":"` + start.Tree + `","patch":{"key":"k","size":1,"sha256":"00"}}`)
	res := func() *wf.Result {
		return &wf.Result{Phases: []wf.PhaseResult{{ID: "a", Calls: []wf.CallRecord{
			{Key: "a/0", TaskID: t1, Status: wf.CallDone, Code: code}, {Key: "a/1", TaskID: t2, Status: wf.CallDone, Code: code}}}}}
	}
	signed := &WorkerSet{Keys: [][]byte{w.key.Public().(ed25519.PublicKey)}}
	for _, tc := range []struct {
		name    string
		workers *WorkerSet
		tip     *codesnap.Snapshot
		sig     *TipSig
		refused string   // takeTip's refusal
		lost    []string // the writers notInTip refuses
	}{
		{"a signed tip at the start names both writers", signed, start, keys.signTip(info, "w", t2, start, []string{t1, t2}, start.Tree, ""), "", nil},
		{"the start unsigned", signed, start, nil, "", []string{t1, t2}},
		{"a signed tip naming one", signed, tip, keys.signTip(info, "w", t2, tip, []string{t2}, start.Tree, ""), "", []string{t1}},
		{"a v1 tip in a run that signs its workers", signed, tip, v1(tip), "from before tip lists", nil},
		{"a v1 tip in a run from before lists", nil, tip, v1(tip), "", nil},
	} {
		own := RunInput{RunID: run, Code: start, Workers: tc.workers}
		in, err := e.takeTip(t.Context(), own, RunInput{Tip: tc.tip, TipSig: tc.sig}, "E1", false)
		if tc.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("%s: takeTip: %v; want refused: %s", tc.name, err, tc.refused)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: takeTip refused: %v", tc.name, err)
			continue
		}
		why := e.notInTip(in, start, res())
		var lost []string
		for task := range why {
			lost = append(lost, task)
		}
		slices.Sort(lost)
		if !slices.Equal(lost, tc.lost) {
			t.Errorf("%s: writers not in the tree %v (%v); want %v", tc.name, lost, why, tc.lost)
		}
	}
	// A v1 tip handed to notInTip in a run that signs its workers (takeTip
	// refuses it first): every writer, with the upgrade.
	why := e.notInTip(RunInput{RunID: run, Code: start, Workers: signed, Tip: tip, TipSig: v1(tip)}, start, res())
	if len(why) != 2 || !strings.Contains(why[t1], "upgrade every worker") {
		t.Errorf("a v1 tip in a run that signs its workers: %v; want both writers refused, saying to upgrade", why)
	}
}
