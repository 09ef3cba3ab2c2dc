package spawn_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/spawn"
	"github.com/broodhq/brood/internal/testbrood"
)

const leafAndDelegator = `
agents:
  root:
    - tools:
        - Task: {subagent_type: explore, description: "leaf", prompt: "Read the README."}
        - Task: {subagent_type: general-purpose, description: "delegator", prompt: "Delegate a read."}
    - say: "root done"
  explore:
    - tools: [{Read: {file_path: README.md}}]
    - say: "## What I did\nRead it.\n## What I found\nA README.\n## Files changed\nnone\n## Problems\nnone"
  general-purpose:
    - tools:
        - Task: {subagent_type: explore, description: "grandchild", prompt: "Read the README."}
    - say: "## What I did\nDelegated.\n## What I found\n{{trunc 400 (result 0)}}\n## Files changed\nnone\n## Problems\nnone"
`

// TestLeanChildOnlyForLeaves: a dispatcher asks for brood (delegates) for a
// child whose envelope may delegate and for brood-child otherwise;
// brood-child (a binary without spawn.Extras, here this test binary run
// by that name) runs a leaf, and refuses an envelope that may delegate
// rather than run it without the Workflow tool or output-schema checks.
func TestLeanChildOnlyForLeaves(t *testing.T) {
	for _, tc := range []struct {
		name        string
		leanForAll  bool
		delegator   string // the general-purpose child's status
		errContains string
	}{
		{"brood for the delegator", false, dispatch.StatusDone, ""},
		{"brood-child for all", true, dispatch.StatusFailed, "runs only children that cannot delegate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, leafAndDelegator, nil)
			full := p.exe(t)
			lean := testbrood.LinkLean(t)
			var mu sync.Mutex
			var asked []bool
			d, err := spawn.New(spawn.Config{
				ProjectRoot: p.root, Workspace: p.root, Registry: p.registry(), Settings: p.settings(nil),
				ExeFunc: func(env *dispatch.Envelope) (string, []string) {
					mu.Lock()
					defer mu.Unlock()
					delegates := env.MayDelegate()
					asked = append(asked, delegates)
					if delegates && !tc.leanForAll {
						return full, nil
					}
					return lean, nil
				},
				Env: p.env, MaxDepth: 2, SourceAgent: "root",
				ParentSystem: "You are the root agent.", ParentModel: "script:" + p.script,
				ParentTools: []string{"Read", "Glob", "Grep", "LS"},
				Permissions: dispatch.Permissions{Mode: "default"},
			})
			must(t, err)
			out, _ := p.runRoot(context.Background(), d)
			if out.Status != "done" {
				t.Fatalf("root: %s %s", out.Status, out.Error)
			}
			mu.Lock()
			got := slices.Clone(asked)
			mu.Unlock()
			if len(got) != 2 || !slices.Contains(got, false) || !slices.Contains(got, true) {
				t.Fatalf("ExeFunc asked with %v, want one leaf (false) and one delegator (true)", got)
			}
			ents, err := os.ReadDir(dispatch.Root(p.root))
			must(t, err)
			status := map[string]*dispatch.Result{}
			for _, e := range ents {
				r := readResult(t, p.root, e.Name())
				status[r.Agent+"@"+r.Status] = r
			}
			if _, ok := status["explore@"+dispatch.StatusDone]; !ok {
				t.Errorf("the leaf did not finish under brood-child: %v", keys(status))
			}
			r, ok := status["general-purpose@"+tc.delegator]
			if !ok {
				t.Fatalf("the delegator did not end %s: %v", tc.delegator, keys(status))
			}
			if tc.errContains != "" && !strings.Contains(r.Error, tc.errContains) {
				t.Errorf("delegator's error %q, want it to say %q", r.Error, tc.errContains)
			}
			if tc.errContains == "" && !strings.Contains(r.Summary, "A README") {
				t.Errorf("delegator's summary lacks its grandchild's finding: %q", r.Summary)
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
