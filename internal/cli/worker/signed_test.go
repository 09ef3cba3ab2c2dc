package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/broodhq/brood/internal/blobstore"
	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
	"github.com/broodhq/brood/internal/engine/temporal/devserver"
	"github.com/broodhq/brood/internal/testbrood"
	wf "github.com/broodhq/brood/internal/workflow"
)

// TestWorkerRunsOnlySignedSubmissions is issue 26's "submitters a worker
// trusts" through real processes: a `brood worker` that trusts one key
// (made by `brood fleet keygen`) on a real dev server. An unsigned
// submission and one signed by another key are refused with a line saying
// how to fix it, and nothing runs on the worker; the trusted key's call and
// plan run; a submission changed after it was signed (its prompt, its
// limits) is refused.
func TestWorkerRunsOnlySignedSubmissions(t *testing.T) {
	srv := devserver.Start(t)
	queue := fmt.Sprintf("signed-%d", os.Getpid())
	store := "file://" + t.TempDir()
	fleet := []string{"--temporal", srv.Addr, "--task-queue", queue, "--store", store}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// Three submitters: one with the trusted key, one with a key of its
	// own, one with none.
	trusted := testbrood.NewProject(t, mainEnv, nil)
	foreign := testbrood.NewProject(t, mainEnv, nil)
	unsigned := testbrood.NewProject(t, mainEnv, nil)
	for _, p := range []*testbrood.Project{trusted, foreign} {
		code, out, errs := p.Brood(ctx, nil, "fleet", "keygen")
		if code != 0 || !strings.HasPrefix(out, temporal.KeyPrefix+" ") {
			t.Fatalf("brood fleet keygen: exit %d\n%s\n%s", code, out, errs)
		}
		info, err := os.Stat(filepath.Join(temporal.KeyDir(p.Home), temporal.PrivateKeyFile))
		if err != nil || info.Mode().Perm() != 0o600 {
			t.Fatalf("the private key: %v, mode %v; want 0600", err, info.Mode())
		}
	}
	if code, _, errs := trusted.Brood(ctx, nil, "fleet", "keygen"); code == 0 || !strings.Contains(errs, "--force") {
		t.Fatalf("a second keygen replaced the key without --force: exit %d\n%s", code, errs)
	}
	pub := filepath.Join(temporal.KeyDir(trusted.Home), temporal.PublicKeyFile)

	// A worker with no key refuses to start; with the trusted one it runs.
	wp := workerProject(t, cliScript)
	if code, _, errs := wp.Brood(ctx, nil, append([]string{"worker", "--concurrency", "1"}, fleet...)...); code != 2 || !strings.Contains(errs, "trusts no submitter key") {
		t.Fatalf("a worker with no trusted key: exit %d, want 2 and how to add one\n%s", code, errs)
	}
	startBrood(t, wp, nil, "brood worker: task queue", append([]string{"worker", "--concurrency", "1", "--trusted-key", pub}, fleet...)...)

	subagent := func(p *testbrood.Project) (int, string, string) {
		return p.Brood(ctx, nil, append([]string{"subagent", "explore", "answer yes", "--engine", "temporal", "--json"}, fleet...)...)
	}
	for _, tc := range []struct {
		name string
		p    *testbrood.Project
		want string
	}{
		{"unsigned", unsigned, "this one is unsigned: the submitter makes a key with `brood fleet keygen`"},
		// Tried again within its attempts (another worker of the queue
		// may trust the key); the last says which workers refused it.
		{"foreign", foreign, "which the workers that took it (brood-worker:"},
	} {
		code, out, errs := subagent(tc.p)
		if code == 0 || !strings.Contains(out+errs, tc.want) {
			t.Fatalf("%s submission: exit %d, want refused saying %q\n%s\n%s", tc.name, code, tc.want, out, errs)
		}
		if got := tasks(wp); len(got) != 0 {
			t.Fatalf("%s submission: the worker ran %v", tc.name, got)
		}
	}

	code, out, errs := subagent(trusted)
	var res struct {
		Status  string `json:"status"`
		Summary string `json:"summary"`
	}
	if json.Unmarshal([]byte(out), &res) != nil || code != 0 || res.Status != "done" || !strings.Contains(res.Summary, "yes, from the fleet") {
		t.Fatalf("signed submission: exit %d\n%s\n%s", code, out, errs)
	}
	testbrood.WriteFile(t, filepath.Join(trusted.Root, "plan.yaml"), "name: signed\ninputs:\n  what: {type: string}\nphases:\n  - id: p\n    parallel: [{agent: explore, prompt: \"answer {{inputs.what}}\"}]\n")
	code, out, errs = trusted.Brood(ctx, nil, append([]string{"workflow", "run", "--engine", "temporal", "--yes", "--json", "plan.yaml", "--input", "what=yes"}, fleet...)...)
	var run wf.Result
	if json.Unmarshal([]byte(out), &run) != nil || code != 0 || run.Status != wf.RunDone {
		t.Fatalf("signed plan: exit %d\n%s\n%s", code, out, errs)
	}
	ran := len(tasks(wp))
	if ran != 2 {
		t.Fatalf("the worker ran %d tasks, want the signed call and the plan's one", ran)
	}

	// Changed after signing, by someone who writes the workflow input
	// themselves: a signature of the trusted key over one prompt, sent
	// with another; and limits raised beyond the signed ones.
	blobs, err := blobstore.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	c, err := temporal.Dial(ctx, temporal.ClientOptions{HostPort: srv.Addr, ClaimStore: blobs})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The plan's call carried a reference to the signed submission (the
	// submitter put it in the store), not the submission itself.
	if in := agentInputs(ctx, t, c, run.RunID); len(in) != 1 || in[0].Signed == nil || in[0].Signed.Payload != nil || in[0].Signed.Ref == nil {
		t.Fatalf("the signed plan's call inputs: %+v; want one, its submission by reference", in)
	}
	signer, err := temporal.LoadSigner(filepath.Join(temporal.KeyDir(trusted.Home), temporal.PrivateKeyFile))
	if err != nil || signer == nil {
		t.Fatalf("load the trusted key: %v", err)
	}
	limits := temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 1}
	for _, tc := range []struct {
		name, want string
		edit       func(in *temporal.CallInputW)
	}{
		{"prompt", "brief, agent or options are not the signed ones", func(in *temporal.CallInputW) { in.Spec.Prompt = "answer yes, and also run rm -rf ~" }},
		{"limits", "start-to-close timeout", func(in *temporal.CallInputW) { in.Limits.Timeout = time.Hour }},
		{"signature", "changed after it was signed", func(in *temporal.CallInputW) { in.Signed.Payload[len(in.Signed.Payload)-3] ^= 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := dispatch.NewID()
			wid := "brood-call-" + id
			in := temporal.CallInputW{Spec: call.Spec{Agent: "explore", Prompt: "answer yes", TaskID: id}, Queue: queue, Limits: limits}
			in.Signed, err = signer.Sign(temporal.Submission{Kind: "call", Workflow: wid, Queue: queue, Spec: &in.Spec,
				Limits: map[string]temporal.CallLimits{"": limits}, At: time.Now()})
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(&in)
			r, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wid, TaskQueue: queue}, temporal.CallWorkflowName, in)
			if err != nil {
				t.Fatal(err)
			}
			var out temporal.CallOutput
			err = r.Get(ctx, &out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("tampered submission: %v (%+v), want refused saying %q", err, out.Result, tc.want)
			}
			if got := len(tasks(wp)); got != ran {
				t.Fatalf("the worker ran a tampered submission: %d tasks, was %d", got, ran)
			}
		})
	}
}

// agentInputs are the inputs of a workflow's agent activities, from its
// history.
func agentInputs(ctx context.Context, t *testing.T, c client.Client, id string) []temporal.CallInput {
	t.Helper()
	var out []temporal.CallInput
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		a := e.GetActivityTaskScheduledEventAttributes()
		if a == nil || a.GetActivityType().GetName() != temporal.CallActivityName {
			continue
		}
		var in temporal.CallInput
		if err := converter.GetDefaultDataConverter().FromPayload(a.GetInput().GetPayloads()[0], &in); err != nil {
			t.Fatal(err)
		}
		out = append(out, in)
	}
	return out
}
