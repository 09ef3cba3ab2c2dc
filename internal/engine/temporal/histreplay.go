package temporal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"strings"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	"github.com/broodhq/brood/internal/blobstore"
	wf "github.com/broodhq/brood/internal/workflow"
)

// A run's output as the submitter takes it (docs/scale-out.md, "Who a
// submitter trusts"): whoever completes a workflow task writes the
// workflow's completion result, so the submitter never reads it. It reads
// the execution's history (the run id pinned) and replays it with this
// brood's own workflow code: the commands the history holds must be the
// ones that code makes from the history's start input and the activity
// results in it (else the replay fails: the history is refused), and the
// output is what that code returned in the replay.

// replayed is a workflow function's own return in a replay.
type replayed[O any] struct {
	Out O
	Err error
	// Ran: the function returned (a history that ends without its
	// workflow's end, terminated or timed out, has none).
	Ran bool
	// Versions is the version each workflow change the code asked for
	// was given in the replay (a change whose marker the history lacks:
	// DefaultVersion, brood's code from before it).
	Versions map[string]workflow.Version
}

// closedHistory reads execution exec of workflow wid whole. It refuses a
// history that has not ended (the run still runs: there is no output to
// take yet).
func (e *Engine) closedHistory(ctx context.Context, wid, exec string) (*historypb.History, error) {
	if exec == "" {
		return nil, fmt.Errorf("workflow %s: no execution named to read", wid)
	}
	h := &historypb.History{}
	size := 0
	it := e.cfg.Client.GetWorkflowHistory(ctx, wid, exec, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("read the history of workflow %s (execution %s) on Temporal: %w", wid, exec, err)
		}
		h.Events = append(h.Events, ev)
		if size += proto.Size(ev); len(h.Events) > maxHistoryEvents || size > maxHistoryBytes {
			return nil, fmt.Errorf("workflow %s's history on Temporal (execution %s) is larger than any brood run's (over %d events or %d MiB): nothing of it is taken; check who can reach the namespace's frontend", wid, exec, maxHistoryEvents, maxHistoryBytes>>20)
		}
	}
	if len(h.Events) == 0 || !closeEvent(h.Events[len(h.Events)-1].GetEventType()) {
		return nil, fmt.Errorf("workflow %s (execution %s) has not ended on Temporal: its output is taken when it ends", wid, exec)
	}
	return h, nil
}

// Bounds on a history the submitter reads (review26 P3-2): the server's
// own default limits are 51,200 events and 50 MiB, so no run of brood's
// reaches these.
const (
	maxHistoryEvents = 100_000
	maxHistoryBytes  = 256 << 20
)

// closeEvent: the event ends a workflow execution.
func closeEvent(t enumspb.EventType) bool {
	switch t {
	case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
		enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
		return true
	}
	return false
}

// replayConfig is how a replay decodes a history's payloads: the data
// converter, and the claim check's store (nil: none) that holds the large
// ones.
type replayConfig struct {
	dc     converter.DataConverter
	claims *blobstore.Store
	// memo keeps the result signatures the replayed workflow verifies
	// (nil: none kept).
	memo *sigMemo
}

// replayConfig is the engine's (Config.ClaimStore, else its store's).
func (e *Engine) replayConfig() replayConfig {
	rc := replayConfig{dc: e.cfg.DataConverter, claims: e.cfg.ClaimStore}
	if rc.claims == nil {
		rc.claims, _ = e.store().(*blobstore.Store)
	}
	if rc.claims == nil && e.cfg.Code != nil {
		rc.claims = e.cfg.Code.Blobs // a fleet store of another kind keeps no claims
	}
	return rc
}

// replayHistory replays h, the history of execution exec of workflow wid,
// with fn registered as workflow name, and returns what fn returned;
// check (nil: none) is run first on the start input, and its error, if
// any, is returned, nothing of fn run. The
// replay fails (a one-line error that says what to do) when the history's
// commands are not fn's: something other than this brood's workflow code
// completed its workflow tasks, or a newer brood's code did.
func replayHistory[I, O any](rc replayConfig, h *historypb.History, wid, exec, name string, fn func(workflow.Context, I) (O, error), check func(I) error) (replayed[O], error) {
	var (
		mu       sync.Mutex
		got      replayed[O]
		notTaken error
	)
	asked := &versionsAsked{got: map[string]workflow.Version{}}
	var required map[string]int
	opts := sdkworker.WorkflowReplayerOptions{DataConverter: rc.dc, DisableDeadlockDetection: true,
		Interceptors: []interceptor.WorkerInterceptor{asked}}
	if rc.claims != nil {
		opts.ExternalStorage = ExternalStorage(rc.claims, 0)
	}
	r, err := sdkworker.NewWorkflowReplayerWithOptions(opts)
	if err != nil {
		return got, fmt.Errorf("replay workflow %s: %w", wid, err)
	}
	r.RegisterWorkflowWithOptions(func(w workflow.Context, in I) (O, error) {
		if v, ok := any(in).(versioned); ok {
			mu.Lock()
			required = v.versions()
			mu.Unlock()
		}
		if check != nil {
			// The start input as the SDK decodes it (large payloads read
			// back from the claim check's store), checked before any of
			// its plan runs.
			if err := check(in); err != nil {
				mu.Lock()
				notTaken = err
				mu.Unlock()
				var none O
				return none, err
			}
		}
		if rc.memo != nil {
			w = workflow.WithValue(w, sigMemoKey{}, rc.memo)
		}
		out, err := fn(w, in)
		mu.Lock()
		got = replayed[O]{Out: out, Err: err, Ran: true}
		mu.Unlock()
		return out, err
	}, workflow.RegisterOptions{Name: name})
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	err = r.ReplayWorkflowHistoryWithOptions(quiet, h, sdkworker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: wid, RunID: exec}})
	mu.Lock()
	defer mu.Unlock()
	if notTaken != nil {
		return replayed[O]{}, notTaken
	}
	if err == nil {
		err = sameEnd(h, got.Ran, got.Err)
	}
	if err == nil {
		err = asked.skipped(required)
	}
	if err != nil {
		return replayed[O]{}, notReplayed(h, wid, exec, err)
	}
	got.Versions = asked.given()
	return got, nil
}

// versioned is a workflow input that says which workflow versions its
// replay must take (RunInput.Versions).
type versioned interface{ versions() map[string]int }

func (in RunInput) versions() map[string]int   { return in.Versions }
func (in CallInputW) versions() map[string]int { return in.Versions }

// versionsAsked records, in one replay, the version each workflow change
// the code asked for was given: a change whose marker the history lacks
// is given DefaultVersion, brood's code from before it (so old histories
// replay), which whoever completed the workflow tasks chooses by
// recording none (review26 P1-1).
type versionsAsked struct {
	interceptor.WorkerInterceptorBase
	mu  sync.Mutex
	got map[string]workflow.Version
}

func (v *versionsAsked) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &versionsIn{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, v: v}
}

type versionsIn struct {
	interceptor.WorkflowInboundInterceptorBase
	v *versionsAsked
}

func (i *versionsIn) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&versionsOut{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, v: i.v})
}

type versionsOut struct {
	interceptor.WorkflowOutboundInterceptorBase
	v *versionsAsked
}

func (o *versionsOut) GetVersion(ctx workflow.Context, change string, lo, hi workflow.Version) workflow.Version {
	got := o.Next.GetVersion(ctx, change, lo, hi)
	o.v.mu.Lock()
	defer o.v.mu.Unlock()
	if old, ok := o.v.got[change]; !ok || got < old {
		o.v.got[change] = got
	}
	return got
}

// given is the version each change was given (a copy).
func (v *versionsAsked) given() map[string]workflow.Version {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.got)
}

// skipped refuses a replay in which the code asked for a change the run's
// start requires (required) and was given a lower version: its history
// lacks the marker that run's workers record.
func (v *versionsAsked) skipped(required map[string]int) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for change, want := range required {
		if got, ok := v.got[change]; ok && int(got) < want {
			return fmt.Errorf("it skips version %d of %q, which the run's submitter requires (its history records %d): brood workers record it, so something else completed its workflow tasks, or a worker older than its submitter ran it", want, change, got)
		}
	}
	return nil
}

// sameEnd checks that the history ends as the replayed code did: the
// SDK's replayer compares the close event with the code's last command
// only for a completion (a history its completer failed, while brood's
// code completes, replays without an error).
func sameEnd(h *historypb.History, ran bool, err error) error {
	var want enumspb.EventType
	var cancelled *temporal.CanceledError
	switch {
	case !ran:
		return nil // the server ended it (terminated, timed out): the caller says so
	case err == nil:
		want = enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED
	case errors.As(err, &cancelled):
		want = enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED
	default:
		want = enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED
	}
	got := h.GetEvents()[len(h.GetEvents())-1].GetEventType()
	if got == want || got == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED || got == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT {
		return nil
	}
	return fmt.Errorf("the history ends %s where brood's code ends %s", got, want)
}

// notReplayed is a replay's failure as the user reads it: a history a
// newer brood's workflow code wrote (its version markers name changes
// this code does not know) says to upgrade; one whose workflow tasks
// carry a flag this brood's Temporal SDK does not know (a newer SDK's)
// says that, or an attack; any other says the history is not brood's
// code's, whether something else completed its workflow tasks or a brood
// of another version did (review26 P3-5: an honest fleet whose workers
// run another brood gets no alarm without that possibility named).
// Nothing of it is taken in every case.
func notReplayed(h *historypb.History, wid, exec string, err error) error {
	if change, v, ok := newerCode(h); ok {
		return historyRefused{fmt.Errorf("workflow %s (execution %s) was run by a newer brood's workflow code (its history has version %d of %q, which this brood does not know): upgrade brood to read it (%v)", wid, exec, v, change, oneLine(err))}
	}
	if strings.Contains(err.Error(), "unknown SDK flag") {
		return historyRefused{fmt.Errorf("workflow %s's history on Temporal (execution %s) was recorded with a Temporal SDK flag this brood does not know, so nothing of it is taken: a newer brood's workers record such flags (upgrade brood to read it), or something other than a brood worker completed its workflow tasks (check who can reach the namespace's frontend) (%v)", wid, exec, oneLine(err))}
	}
	return historyRefused{fmt.Errorf("workflow %s's history on Temporal (execution %s) does not replay with brood's own workflow code, so nothing of it is taken: something other than a brood worker completed its workflow tasks (check who can reach the namespace's frontend), or workers of a brood version other than this one ran it (compare brood version here and on the fleet's workers); run it again (%v)", wid, exec, oneLine(err))}
}

// historyRefused is a history that does not replay (notReplayed).
type historyRefused struct{ error }

func (r historyRefused) Unwrap() error { return r.error }

// oneLine is err's text on one line, cut to a readable length.
func oneLine(err error) string {
	s := strings.Join(strings.Fields(err.Error()), " ")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// workflowChanges is every workflow change this brood's code knows
// (workflow.GetVersion's change ids: the one list,
// TestEveryVersionIsKnown) at its highest version: what a submitter
// requires the replay of a run it starts to have taken (RunInput.Versions).
func workflowChanges() map[string]int {
	return map[string]int{lazyCallsVersion: 1, boundTaskIDsVersion: 1, checkedResultsVersion: 1, checkedTipsVersion: 1, boundResultsVersion: 1, boundStopsVersion: 1}
}

// knownVersion is the highest version of a workflow change this brood's
// code knows; false: none of that id.
func knownVersion(change string) (int, bool) {
	v, ok := workflowChanges()[change]
	return v, ok
}

// changeID is how a change id of brood's looks: any other is not printed.
var changeID = regexp.MustCompile(`^brood\.[a-z.-]{1,64}$`)

// newerCode is a version marker of h that this brood's code does not
// know (a change id it has no GetVersion for, or a higher version).
func newerCode(h *historypb.History) (string, int, bool) {
	dc := converter.GetDefaultDataConverter()
	for _, ev := range h.GetEvents() {
		m := ev.GetMarkerRecordedEventAttributes()
		if m == nil || m.GetMarkerName() != "Version" {
			continue
		}
		var change string
		var v int
		if !decodeOne(dc, m.GetDetails()["change-id"], &change) || !decodeOne(dc, m.GetDetails()["version"], &v) {
			continue
		}
		if max, ok := knownVersion(change); (!ok || v > max) && changeID.MatchString(change) {
			return change, v, true
		}
	}
	return "", 0, false
}

func decodeOne(dc converter.DataConverter, p *commonpb.Payloads, v any) bool {
	return p != nil && len(p.GetPayloads()) == 1 && dc.FromPayload(p.GetPayloads()[0], v) == nil
}

// runRead is one execution of a plan run as its submitter takes it from
// one read of its history: brood's replay of it (out), what the same
// history says of its calls' times by the server's clock (times:
// planTimes) and which workflow changes the replay took (versions), and
// the submission this key signed for it (sub: ownRunOutput; nil: none
// checked, or no key).
type runRead struct {
	out      RunOutput
	sub      *Submission
	times    map[string]callHistory
	versions map[string]workflow.Version
	// verdicts are the verdicts of its signed results (takeRun's), for
	// a resume's carry.
	verdicts verdicts
	// start is the execution's start input as the replay decoded it,
	// exec the execution's id.
	start RunInput
	exec  string
	// memo is the result signatures its replay verified (takeRun's
	// verifyResults verifies none of them again).
	memo *sigMemo
}

// replayRun is execution exec of plan run id as this brood's workflow
// code makes it from the execution's history (replayHistory), once check
// accepts the input the execution was started with (its starter's). The
// workflow's failure is its code's own error in the replay, never the
// failure the history records. The history is read once: what else the
// submitter takes of it comes with the output (runRead).
func (e *Engine) replayRun(ctx context.Context, id, exec string, check func(RunInput) error) (runRead, error) {
	h, err := e.closedHistory(ctx, id, exec)
	if err != nil {
		return runRead{}, err
	}
	return e.readRun(id, exec, h, check)
}

// readRun is replayRun of the history h read.
func (e *Engine) readRun(id, exec string, h *historypb.History, check func(RunInput) error) (runRead, error) {
	var (
		mu    sync.Mutex
		start RunInput
	)
	rc := e.replayConfig()
	rc.memo = newSigMemo()
	got, err := e.replayRunWith(rc, id, exec, h, func(in RunInput) error {
		mu.Lock()
		start = in
		mu.Unlock()
		if check == nil {
			return nil
		}
		return check(in)
	})
	if err != nil {
		return runRead{}, err
	}
	mu.Lock()
	defer mu.Unlock()
	start.Journal = nil
	return runRead{out: got.out, times: planTimes(e.cfg.DataConverter, h), versions: got.versions, start: start, exec: exec, memo: rc.memo}, nil
}

// runReplayed is a plan execution's replay: its output and the versions
// it took.
type runReplayed struct {
	out      RunOutput
	versions map[string]workflow.Version
}

func (e *Engine) replayRunHistory(id, exec string, h *historypb.History, check func(RunInput) error) (runReplayed, error) {
	return e.replayRunWith(e.replayConfig(), id, exec, h, check)
}

func (e *Engine) replayRunWith(rc replayConfig, id, exec string, h *historypb.History, check func(RunInput) error) (runReplayed, error) {
	got, err := replayHistory(rc, h, id, exec, PlanWorkflowName, PlanWorkflow, check)
	switch {
	case err != nil:
		return runReplayed{}, err
	case !got.Ran:
		return runReplayed{}, fmt.Errorf("workflow %s ended on Temporal without a result (%s): continue it with brood workflow resume %s", id, endOf(h), id)
	case got.Err != nil:
		return runReplayed{}, workflowErr(got.Err)
	case got.Out == nil || got.Out.Result == nil:
		return runReplayed{}, fmt.Errorf("workflow %s ended without a result", id)
	}
	if why := serverClose(h, got.Ran); why != "" {
		res := *got.Out.Result
		res.Reason = joinReason(res.Reason, "its workflow's code ended "+res.Status+" in brood's replay of its history, but "+why)
		got.Out.Result = &res
	}
	return runReplayed{out: *got.Out, versions: got.Versions}, nil
}

// serverClose says that the server ended h (terminated, timed out) after
// the code had run to its end in the replay (ran): the output is the
// code's own, from the history's results, and the server's close is said
// with it (review26 P3-3). "": the history ends as the code did.
func serverClose(h *historypb.History, ran bool) string {
	switch t := h.GetEvents()[len(h.GetEvents())-1].GetEventType(); {
	case !ran:
		return ""
	case t == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED || t == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
		return "the server recorded it " + endOf(h) + " on Temporal (temporal workflow terminate, or its timeout), so it has no completion there"
	}
	return ""
}

// callRead is one execution of a single call's workflow as its
// submitter takes it from one read of its history: brood's replay of it
// (got) and what the same history says of its activity (times).
type callRead struct {
	got   replayed[*CallOutput]
	start CallInputW
	times callHistory
}

// replayCall is execution exec of single call workflow wid as this
// brood's workflow code makes it from the execution's history, once check
// (nil: none) accepts its start input: its output, or its own failure
// (callEnd), that start input (what a result must answer:
// briefRefusal) and the server's times of its activity; err: the history
// does not replay, or check refused it.
func (e *Engine) replayCall(ctx context.Context, wid, exec string, check func(CallInputW) error) (callRead, error) {
	h, err := e.closedHistory(ctx, wid, exec)
	if err != nil {
		return callRead{}, err
	}
	var (
		mu    sync.Mutex
		start CallInputW // as the replay decoded it
	)
	got, err := replayHistory(e.replayConfig(), h, wid, exec, CallWorkflowName, func(w workflow.Context, in CallInputW) (*CallOutput, error) {
		mu.Lock()
		start = in
		mu.Unlock()
		return CallWorkflow(w, in)
	}, check)
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		return callRead{}, err
	}
	if !got.Ran {
		got.Err = fmt.Errorf("it ended on Temporal without a result (%s)", endOf(h))
	}
	task := cmp.Or(start.Spec.Resume, start.Spec.TaskID)
	got = e.vetRefusal(h, resultCall{Namespace: e.cfg.Namespace, Workflow: wid, Run: exec, Submitter: e.fingerprint(), Task: task}, start, got)
	return callRead{got: got, start: start, times: callTimes(h)}, nil
}

// callEnd is a replayed call's output, or its own failure as one line
// (workflowErr).
func callEnd(got replayed[*CallOutput]) (CallOutput, error) {
	switch {
	case got.Err != nil:
		var app *temporal.ApplicationError
		if errors.As(got.Err, &app) {
			return CallOutput{}, workflowErr(got.Err)
		}
		return CallOutput{}, &temporalAppError{msg: got.Err.Error()}
	case got.Out == nil:
		return CallOutput{}, errors.New("the call's workflow ended without a result")
	}
	return *got.Out, nil
}

// endOf says how a closed history ended, as the server recorded it.
func endOf(h *historypb.History) string {
	t := h.GetEvents()[len(h.GetEvents())-1].GetEventType()
	s := strings.ToLower(strings.TrimPrefix(t.String(), "WorkflowExecution"))
	return strings.NewReplacer("timedout", "timed out", "continuedasnew", "continued as new").Replace(s)
}

// ownRunOutput is execution exec of run id as brood's own workflow code
// makes it from the execution's history (replayRun), once the input it
// was started with is checked to be the submission this key signed
// (ownSubmission: runRead.sub; nil without a key, when nothing is
// checked). A
// start this key did not sign is not replayed at all: its plan is
// whoever started it's, and a replay runs it (review23 P2-5).
func (e *Engine) ownRunOutput(ctx context.Context, id, exec string) (runRead, error) {
	var sub *Submission
	r, err := e.replayRun(ctx, id, exec, func(start RunInput) error {
		s, err := e.ownSubmission(ctx, id, start)
		if err != nil {
			return notMine{err}
		}
		if s == nil {
			// No key: the plan is its starter's, unchecked; one a run of
			// brood's could be only (review26 P3-2).
			if start.Plan == nil {
				return notMine{fmt.Errorf("run %s's execution on Temporal has no plan: not replayed", id)}
			}
			if _, err := wf.Check(start.Plan, wf.CheckOptions{Inputs: start.Inputs}); err != nil || PlanCallBound(start.Plan, start.Inputs) > maxHistoryEvents {
				return notMine{fmt.Errorf("run %s's plan on Temporal is not one brood would run (%v): not replayed", id, err)}
			}
		}
		sub = s
		return nil
	})
	r.sub = sub
	return r, err
}

// notMine is ownRunOutput's refusal of an execution this key did not
// start: nothing of it was replayed.
type notMine struct{ error }

func (n notMine) Unwrap() error { return n.error }
