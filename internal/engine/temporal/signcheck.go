package temporal

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	wf "github.com/broodhq/brood/internal/workflow"
)

// CallInfo is what the worker knows of an activity besides its input:
// the workflow it belongs to, its queue, and the limits it was scheduled
// with (by whoever completed the workflow task: not necessarily brood).
type CallInfo struct {
	Namespace string
	Workflow  string
	// Run is the workflow execution's run id.
	Run string
	// Activity is the activity's id in its execution.
	Activity string
	// Submitter is the fingerprint of the key that signed the call's
	// submission ("": unsigned), set by callInfo.
	Submitter    string
	Queue        string
	Heartbeat    time.Duration
	StartToClose time.Duration
	Attempt      int
	// Priority is the activity's Temporal priority key (0: the server's
	// default).
	Priority int
	// Bind is the call the activity runs, as its result's signature names
	// it (set by callInfo).
	Bind callBind
}

// infoOf is the activity's CallInfo.
func infoOf(ctx context.Context) CallInfo {
	i := activity.GetInfo(ctx)
	return CallInfo{Namespace: i.WorkflowNamespace, Workflow: i.WorkflowExecution.ID, Run: i.WorkflowExecution.RunID, Activity: i.ActivityID, Queue: i.TaskQueue, Heartbeat: i.HeartbeatTimeout,
		StartToClose: i.StartToCloseTimeout, Attempt: int(i.Attempt), Priority: i.Priority.PriorityKey}
}

// callInfo is the activity's CallInfo with the submitter of in and the
// call in names.
func callInfo(ctx context.Context, in CallInput) CallInfo {
	info := infoOf(ctx)
	info.Bind = bindOf(in)
	if in.Signed != nil && len(in.Signed.Key) > 0 {
		info.Submitter = Fingerprint(in.Signed.Key)
	}
	return info
}

// submitterOf is who a call runs for, as a new task's owner record keeps
// it (call.Spec's Submitter): the key that signed its submission and the
// workflow it signed. A task continues only for the same (askedFor).
func submitterOf(info CallInfo) string {
	return fmt.Sprintf("key %s, workflow %s", cmp.Or(info.Submitter, "none (unsigned)"), info.Workflow)
}

// admit is the worker's check that a call was signed by a submitter it
// trusts (nil Trust: not checked; brood worker always sets one).
func (a *Activities) admit(ctx context.Context, in CallInput) error {
	if a.Trust == nil {
		return nil
	}
	return a.Trust.Admit(ctx, a.Store, in, infoOf(ctx))
}

// Admit checks a call against the allowlist: its input must carry a
// submission signed by a trusted key, and the call must be what that
// submission describes — for a single call its exact spec, snapshot and
// limits; for a plan's call one of the plan's calls (agent, prompt
// template, isolation, schema, turns, timeout) on the signed snapshot or
// the run's tree grown from it, within the plan's limits — under the
// signed workflow id and task queue. A submission by reference is read
// from store (signref.go). An error that is a store's failure to answer
// is retried (admitError); any other is a refusal.
func (t *Trust) Admit(ctx context.Context, store Store, in CallInput, info CallInfo) error {
	if t.AllowUnsigned {
		return nil
	}
	sub, err := t.verify(ctx, store, in.Signed)
	if err != nil {
		return err
	}
	if err := sub.covers(in, info); err != nil {
		return fmt.Errorf("not what key %s signed: %w", Fingerprint(in.Signed.Key), err)
	}
	return nil
}

// AdmitChain checks a step of a run's tree (the chain activity) the way
// Admit checks a call: signed by a trusted key, for this workflow and
// task queue, a plan's, on the signed snapshot or the run's tree grown
// from it (both the tip and the writer's start).
func (t *Trust) AdmitChain(ctx context.Context, store Store, in ChainInput, info CallInfo) error {
	if t.AllowUnsigned {
		return nil
	}
	sub, err := t.verify(ctx, store, in.Signed)
	if err != nil {
		return err
	}
	fp := Fingerprint(in.Signed.Key)
	if err := sub.runsIn(info); err != nil {
		return fmt.Errorf("not what key %s signed: %w", fp, err)
	}
	switch {
	case sub.Kind != "plan":
		return fmt.Errorf("not what key %s signed: a %s submission has no run tree to change", fp, sub.Kind)
	case sub.Queue != info.Queue:
		return fmt.Errorf("not what key %s signed: signed for task queue %q, run on %q", fp, sub.Queue, info.Queue)
	}
	if err := sameLine(in.Tip, sub.Code); err != nil {
		return fmt.Errorf("not what key %s signed: the run's tip: %w", fp, err)
	}
	if err := sameLine(in.Change.Start, sub.Code); err != nil {
		return fmt.Errorf("not what key %s signed: the change's start: %w", fp, err)
	}
	return nil
}

// verify is a signed submission, checked: signed by a key in the
// allowlist, the signature good, the payload readable. Its payload is
// inline or read from store by its Ref; what verified is kept (by SHA-256,
// key and signature), so a run's calls read and check it once per worker.
// The submission returned is shared: read it only.
func (t *Trust) verify(ctx context.Context, store Store, s *Signed) (*Submission, error) {
	if s == nil {
		if t.Len() == 0 {
			return nil, noKeys()
		}
		return nil, fmt.Errorf("this worker runs only submissions signed by a key it trusts, and this one is unsigned: the submitter makes a key with `brood fleet keygen` (it then signs every submission) and the worker's operator adds its public key (brood worker --trusted-key, or a line in ~/.config/brood/fleet/%s)", TrustedKeysFile)
	}
	if !t.trusts(s.Key) {
		if t.Len() == 0 {
			return nil, noKeys()
		}
		return nil, untrusted{s.Key} // another worker of the queue may trust it (untrusted.go)
	}
	if err := refSignedBy(s); err != nil {
		return nil, err
	}
	k := cacheKey(s)
	if sub, ok := t.verified.get(k); ok {
		return sub, nil
	}
	data, err := payload(ctx, store, s)
	if err != nil {
		return nil, err
	}
	if len(s.Key) != ed25519.PublicKeySize || !ed25519.Verify(ed25519.PublicKey(s.Key), append([]byte(signContext), data...), s.Sig) {
		return nil, fmt.Errorf("the signature of key %s does not match the submission: it was changed after it was signed", Fingerprint(s.Key))
	}
	var sub Submission
	if err := json.Unmarshal(data, &sub); err != nil || sub.Version != 1 {
		return nil, fmt.Errorf("the signed submission of key %s is unreadable (version %d): %v", Fingerprint(s.Key), sub.Version, err)
	}
	t.verified.put(k, &sub, len(data))
	return &sub, nil
}

func noKeys() error {
	return fmt.Errorf("this worker trusts no submitter key, so it runs nothing: add the public key of each submitter (`brood fleet keygen` prints it) with brood worker --trusted-key, or in ~/.config/brood/fleet/%s", TrustedKeysFile)
}

// runsIn checks the namespace and workflow the activity runs under
// against the signed ones: a submission captured in one namespace does
// not run in another whose store holds no claim of it.
func (sub *Submission) runsIn(info CallInfo) error {
	switch {
	case sub.Namespace != "" && sub.Namespace != info.Namespace:
		return fmt.Errorf("signed for namespace %q, run in %q", sub.Namespace, info.Namespace)
	case sub.Workflow != info.Workflow:
		return fmt.Errorf("signed for workflow %q, run under %q", sub.Workflow, info.Workflow)
	}
	return nil
}

// covers checks that the call is one the submission describes.
func (sub *Submission) covers(in CallInput, info CallInfo) error {
	if err := sub.runsIn(info); err != nil {
		return err
	}
	if sub.Queue != info.Queue {
		return fmt.Errorf("signed for task queue %q, run on %q", sub.Queue, info.Queue)
	}
	var agent string
	switch sub.Kind {
	case "call":
		if sub.Spec == nil || !sameJSON(in.Spec, *sub.Spec) {
			return fmt.Errorf("the call's brief, agent or options are not the signed ones")
		}
		if !sameJSON(in.Code, sub.Code) {
			return fmt.Errorf("the call's snapshot is not the signed one")
		}
		if in.From != nil && !sameJSON(in.From, sub.From) {
			return fmt.Errorf("the call's continuation is not the signed one")
		}
		// A single call's workflow is its task's (callWorkflowID): its
		// task id is then bound to what its submitter signed, and a call
		// signed under a workflow of its own cannot name another's task.
		if task := cmp.Or(in.Spec.Resume, in.Spec.TaskID); sub.Workflow != callWorkflowID(task) {
			return fmt.Errorf("a single call of task %q is signed for workflow %q, and a single call's workflow is its task's, %q", task, sub.Workflow, callWorkflowID(task))
		}
		agent = ""
	case "plan":
		if sub.Plan == nil {
			return fmt.Errorf("the signed plan is missing")
		}
		if err := planCovers(sub.Plan, sub.Inputs, sub.Workflow, in.Spec, in.Key); err != nil {
			return err
		}
		if err := planTaskCovers(sub.Workflow, in); err != nil {
			return err
		}
		if err := sub.pinned(in.From); err != nil {
			return err
		}
		if err := sameLine(in.Code, sub.Code); err != nil {
			return err
		}
		agent = in.Spec.Agent
	default:
		return fmt.Errorf("unknown kind %q", sub.Kind)
	}
	return limitsCover(sub.Limits, agent, info)
}

// planCovers checks a plan call's spec against the plan's calls: the
// one key names (wf.CallsOfKey), when the workflow names one (brood's own
// from bound results on: its result's signature names it). Its prompt is
// the call's template with each hole holding what it may hold on a run of
// the signed inputs (wf.PromptMatches).
func planCovers(p *wf.Plan, inputs map[string]any, runID string, s call.Spec, key string) error {
	if s.Parent != "workflow "+runID || s.Context != "" || s.Together != 0 || s.Retries != 0 || s.Limits.TokenBudget != 0 || s.Session != "" {
		return fmt.Errorf("the call's options are not a plan call's")
	}
	// A plan's call starts a task (TaskID) or picks up one its run had
	// started (Resume with Continue); it never sends a task a follow-up.
	if (s.Resume != "") != s.Continue || (s.Resume != "" && s.TaskID != "") || (s.Resume == "" && s.TaskID == "") {
		return fmt.Errorf("the call's task is not a plan call's: a new task id, or the pick-up of one its run started")
	}
	cands := planCalls(p)
	if key != "" {
		if cands = wf.CallsOfKey(p, key); len(cands) == 0 {
			return fmt.Errorf("the call's key %q names no call of the signed plan", printable(key))
		}
	}
	var agentSeen, prompted bool
	for _, c := range cands {
		if c.Agent != s.Agent {
			continue
		}
		agentSeen = true
		if c.Isolation != s.Isolation || c.MaxTurns != s.Limits.MaxTurns || !sameSchema(c.Schema, s.Schema) {
			continue
		}
		if c.Timeout != "" {
			d, err := time.ParseDuration(c.Timeout)
			if err != nil || d.Milliseconds() != s.Limits.TimeoutMS {
				continue
			}
		} else if s.Limits.TimeoutMS != 0 {
			continue
		}
		if wf.PromptMatches(p, c.Prompt, s.Prompt, inputs) {
			// The description is the child's first user turn and its
			// task's label: the call's own in the plan, or derived from
			// the plan's name and the prompt, never the workflow's choice.
			if s.Description == wf.CallDescription(p.Name, c, s.Prompt) ||
				s.Description == wf.ByteCutDescription(p.Name, c, s.Prompt) {
				return nil
			}
			prompted = true
		}
	}
	if !agentSeen {
		return fmt.Errorf("the signed plan runs no agent %q", s.Agent)
	}
	if prompted {
		return fmt.Errorf("the description of this %s call is not the one the signed plan gives it (its own, or the plan's name and the prompt's first line)", s.Agent)
	}
	return fmt.Errorf("the prompt of this %s call is none of the signed plan's (its text between {{...}} holes differs, or a hole holds what it may not: a value other than the signed inputs', or an agent's words outside their untrusted block)", s.Agent)
}

// planTaskCovers checks the task a plan's call names, which its
// workflow (whoever completes it) hands out and no signature covers: one
// its run named (taskOfRun), so no worker, with a record of the task or
// none, starts, picks up or returns another run's task for it; and a
// continuation (From) of that task alone. The transcript the continuation
// names is checked when it is read (transcriptOf).
func planTaskCovers(runID string, in CallInput) error {
	id := cmp.Or(in.Spec.Resume, in.Spec.TaskID)
	if err := taskOfRun(runID, id); err != nil {
		return err
	}
	if in.From != nil && in.From.TaskID != id {
		return unbound("the call's continuation is task %s's, and the call is task %s", in.From.TaskID, id)
	}
	return nil
}

// planCalls is every call of a plan.
func planCalls(p *wf.Plan) []*wf.Call {
	var out []*wf.Call
	for i := range p.Phases {
		ph := &p.Phases[i]
		for j := range ph.Parallel {
			out = append(out, &ph.Parallel[j])
		}
		for j := range ph.Stages {
			out = append(out, &ph.Stages[j])
		}
		if ph.UntilQuiet != nil {
			out = append(out, &ph.UntilQuiet.Call)
		}
		if ph.Votes != nil {
			out = append(out, &ph.Votes.Call)
		}
	}
	return out
}

// sameLine accepts the signed snapshot, or a tree grown from it on the
// fleet (the run's tip after its writers, a stopped writer's start): the
// signed one with layers added — same repository, base commit, dirty
// state (pack and its tree, or patch), remote, bundle, place and ignore
// rules.
func sameLine(got, signed *codesnap.Snapshot) error {
	if sameJSON(got, signed) {
		return nil
	}
	if got == nil || signed == nil {
		return fmt.Errorf("the call's snapshot is not the signed one")
	}
	g, s := *got, *signed
	g.Tree, g.Layers, s.Tree, s.Layers = "", nil, "", nil
	grown := len(got.Layers) >= len(signed.Layers) && sameJSON(g, s)
	for i := 0; grown && i < len(signed.Layers); i++ {
		grown = sameJSON(got.Layers[i], signed.Layers[i])
	}
	if !grown {
		return fmt.Errorf("the call's snapshot is not the signed one nor grown from it (repository, base, dirty state (pack, its tree or patch), remote, bundle or place differ)")
	}
	return nil
}

// What a worker runs at most, whatever a trusted submitter signed: a
// careless or hostile one multiplies the workers' model spend through
// attempts and holds their slots through timeouts.
const (
	MaxAttempts     = 20
	MaxHeartbeat    = time.Hour
	MaxStartToClose = RunLifetime
)

// defaultPriorityKey is the key the server gives an activity with none.
const defaultPriorityKey = 3

// limitsCover checks the activity's timeouts, attempt and priority key
// against the signed limits of its agent (with the defaults brood
// schedules with), and against what this worker runs at most.
func limitsCover(m map[string]CallLimits, agent string, info CallInfo) error {
	switch {
	case info.Attempt > MaxAttempts:
		return fmt.Errorf("attempt %d is over the %d a worker runs: the submitter lowers temporal.attempts", info.Attempt, MaxAttempts)
	case info.Heartbeat > MaxHeartbeat:
		return fmt.Errorf("heartbeat timeout %s is over the %s a worker allows: the submitter lowers pool.heartbeat_timeout", info.Heartbeat, MaxHeartbeat)
	case info.StartToClose > MaxStartToClose:
		return fmt.Errorf("start-to-close timeout %s is over the %s a worker allows: the submitter lowers the agent's timeout", info.StartToClose, MaxStartToClose)
	}
	l := (&activityRunner{in: &RunInput{Limits: m}}).limits(agent)
	// A key runs before higher ones: the activity's may be the signed
	// one or a later one, never an earlier (a stand-in's jump ahead).
	if got, signed := cmp.Or(info.Priority, defaultPriorityKey), cmp.Or(l.Priority, defaultPriorityKey); got < signed {
		return fmt.Errorf("priority key %d is ahead of the signed %d", got, signed)
	}
	if info.Heartbeat > l.Heartbeat {
		return fmt.Errorf("heartbeat timeout %s is over the signed %s", info.Heartbeat, l.Heartbeat)
	}
	if max := l.Timeout + 2*l.KillGrace + 10*time.Second; info.StartToClose > max {
		return fmt.Errorf("start-to-close timeout %s is over the signed %s", info.StartToClose, max)
	}
	if info.Attempt > l.Attempts {
		return fmt.Errorf("attempt %d is over the signed %d", info.Attempt, l.Attempts)
	}
	return nil
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// sameSchema compares two JSON schemas ignoring layout.
func sameSchema(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}
