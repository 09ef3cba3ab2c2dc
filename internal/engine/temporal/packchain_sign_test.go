package temporal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/engine/temporal"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestSignatureCoversThePackChain: a snapshot's pack chain (the earlier
// packs its dirty pack completes) is part of what the submitter signs: a
// plan's call on the signed chain, or on the run's tree grown from it, is
// admitted; one whose chain has another link, or none, is refused.
func TestSignatureCoversThePackChain(t *testing.T) {
	key, pub := newKey(t)
	trust := temporal.NewTrust()
	if err := trust.Add(pub, "test"); err != nil {
		t.Fatal(err)
	}
	ref := func(b string) *blobstore.Ref {
		return &blobstore.Ref{Key: "sha256/" + b + "/" + strings.Repeat(b, 32), Size: 3, SHA256: strings.Repeat(b, 32)}
	}
	snap := &codesnap.Snapshot{Repo: "root:" + strings.Repeat("1", 40), Base: strings.Repeat("1", 40), Tree: strings.Repeat("2", 40), ObjectFormat: "sha1",
		Pack: ref("ab"), DirtyTree: strings.Repeat("2", 40), PackChain: []codesnap.PackLink{{Pack: ref("cd"), Tree: strings.Repeat("6", 40)}}}
	lim := temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 2}
	plan := &wf.Plan{Name: "p", Phases: []wf.Phase{{ID: "a", Parallel: []wf.Call{{Agent: "explore", Prompt: "review {{inputs.file}}"}}}}}
	signed, err := key.Sign(temporal.Submission{Kind: "plan", Workflow: "R1", Queue: "q", Plan: plan, Code: snap, Limits: map[string]temporal.CallLimits{"": lim}})
	if err != nil {
		t.Fatal(err)
	}
	info := temporal.CallInfo{Workflow: "R1", Queue: "q", Heartbeat: 10 * time.Second, StartToClose: time.Minute + 14*time.Second, Attempt: 1}
	tip := *snap
	tip.Tree, tip.Layers = strings.Repeat("3", 40), []*blobstore.Ref{ref("ef")}
	otherLink := tip
	otherLink.PackChain = []codesnap.PackLink{{Pack: ref("99"), Tree: strings.Repeat("6", 40)}}
	noLink := tip
	noLink.PackChain = nil
	for _, tc := range []struct {
		name string
		snap *codesnap.Snapshot
		want string // "" admitted
	}{
		{"the signed chain", snap, ""},
		{"the run's tree grown from it", &tip, ""},
		{"another link", &otherLink, "nor grown from it"},
		{"no chain", &noLink, "nor grown from it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := temporal.CallInput{Spec: call.Spec{Agent: "explore", Prompt: "review a.go", TaskID: temporal.PlanTaskID("R1", time.Now(), 0), Parent: "workflow R1", Description: "p: review a.go"}, Code: tc.snap, Signed: signed}
			err := trust.Admit(t.Context(), nil, in, info)
			if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q (\"\": admitted)", err, tc.want)
			}
		})
	}
}
