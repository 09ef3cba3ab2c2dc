package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// parallel runs a list of calls; tasks with depends_on wait for the tasks
// they name, and are skipped when one of those yields null.
func (x *executor) parallel(ctx context.Context, ph *Phase) PhaseResult {
	pr := PhaseResult{ID: ph.ID, Shape: "parallel", Calls: make([]CallRecord, len(ph.Parallel))}
	x.queue(ph, len(ph.Parallel))
	base := x.scope()
	done := map[string]Latch{}
	for _, t := range ph.Parallel {
		if t.ID != "" {
			done[t.ID] = x.rt.NewLatch(ctx)
		}
	}
	var mu sync.Mutex
	outs := map[string]any{}
	ends := map[string]*CallRecord{}
	wg := x.rt.NewGroup(ctx)
	for j := range ph.Parallel {
		wg.Add(1)
		x.rt.Go(ctx, func(ctx context.Context) {
			defer wg.Done()
			t := &ph.Parallel[j]
			key := parallelKey(ph.ID, t, j)
			if t.ID != "" {
				defer done[t.ID].Open()
			}
			scope := with2(base)
			for _, d := range t.DependsOn {
				done[d].Wait(ctx)
				mu.Lock()
				v, end := outs[d], ends[d]
				mu.Unlock()
				if v == nil {
					why := fmt.Sprintf("it depends on task %s, which yielded no result", d)
					if end != nil {
						why = fmt.Sprintf("it depends on task %s, which yielded no result (%s)", d, endedHow(end))
					}
					pr.Calls[j] = CallRecord{Key: key, Agent: t.Agent, Status: CallSkipped, Error: why}
					x.skip(taskKey(t, j), why)
					x.count(ph, func(n *Counts) { dequeue(n); n.Skipped++ })
					return
				}
				scope[d] = v
			}
			pr.Calls[j] = x.call(ctx, ph, key, t, scope)
			if t.ID != "" {
				mu.Lock()
				outs[t.ID], ends[t.ID] = pr.Calls[j].Output, &pr.Calls[j]
				mu.Unlock()
			}
		})
	}
	wg.Wait(ctx)
	list := make([]any, len(pr.Calls))
	for j, c := range pr.Calls {
		list[j] = c.Output
		if id := ph.Parallel[j].ID; id != "" {
			x.mu.Lock()
			x.outputs[id] = c.Output
			x.mu.Unlock()
		}
	}
	pr.Output = list
	pr.Status, pr.Reason = phaseStatus(ctx, pr.Calls)
	return pr
}

// with2 copies a scope so a call can add its own names.
func with2(s map[string]any) map[string]any {
	out := make(map[string]any, len(s)+4)
	for k, v := range s {
		out[k] = v
	}
	return out
}

// endedHow is a call's status and why, for a reason naming it.
func endedHow(c *CallRecord) string {
	if c.Error == "" {
		return c.Status
	}
	return c.Status + ": " + c.Error
}

// phaseStatus: failed when every call yielded null; partial when some
// were skipped or cancelled, or a writer's change did not land; else done.
func phaseStatus(ctx context.Context, calls []CallRecord) (string, string) {
	ok, skipped, stopped := 0, 0, 0
	var lost []string
	for _, c := range calls {
		if c.Output != nil {
			ok++
		}
		switch c.Status {
		case CallSkipped, CallCancelled:
			skipped++
			if c.Status == CallCancelled && c.TaskID != "" {
				stopped++ // it ran, and was stopped
			}
		case CallNotApplied:
			lost = append(lost, c.Key)
		}
	}
	var why []string
	if len(lost) > 0 {
		why = append(why, fmt.Sprintf("the change of %s was not applied to the tree", strings.Join(lost, ", ")))
	}
	if n := skipped - stopped; n > 0 {
		why = append(why, fmt.Sprintf("%d of %d calls did not run", n, len(calls)))
	}
	if stopped > 0 {
		why = append(why, fmt.Sprintf("%d of %d calls were cancelled while they ran", stopped, len(calls)))
	}
	switch {
	case len(calls) > 0 && ok == 0 && skipped == len(calls) && calls[0].Status == CallSkipped:
		// Held back (a cap), not failed: none of them ran.
		return PhaseSkipped, fmt.Sprintf("none of its %d calls started: %s", len(calls), calls[0].Error)
	case len(calls) > 0 && ok == 0:
		return PhaseFailed, strings.Join(append([]string{fmt.Sprintf("all %d calls yielded no result", len(calls))}, why...), "; ")
	case ctx.Err() != nil || len(why) > 0:
		return PhasePartial, strings.Join(why, "; ")
	}
	return PhaseDone, ""
}

// each runs every item through the pipeline of stages, items in parallel
// with no barrier; a stage that yields null ends its item.
func (x *executor) each(ctx context.Context, ph *Phase) PhaseResult {
	pr := PhaseResult{ID: ph.ID, Shape: "each"}
	base := x.scope()
	items, mine, err := eachItems(ph, base)
	if err != nil {
		pr.Status, pr.Reason, pr.Output = PhaseFailed, err.Error(), []any{}
		return pr
	}
	if len(items) == 0 {
		// Nothing to do is not an error (a scan may find nothing), but it
		// is never silent.
		pr.Status, pr.Output = PhaseDone, []any{}
		pr.Reason = fmt.Sprintf("each: %s gave no items, so no agent ran", ph.Each)
		x.note("phase " + ph.ID + ": " + pr.Reason)
		return pr
	}
	as := ph.As
	if as == "" {
		as = "item"
	}
	x.queue(ph, len(items)*len(ph.Stages))
	outs := make([]any, len(items))
	calls := make([][]CallRecord, len(items))
	wg := x.rt.NewGroup(ctx)
	for i, item := range items {
		wg.Add(1)
		x.rt.Go(ctx, func(ctx context.Context) {
			defer wg.Done()
			scope := with2(base)
			scope[as], scope["prev"] = item, nil
			if mine {
				scope[as] = Own(item) // an item of the user's inputs
			}
			var out any
			for j := range ph.Stages {
				st := &ph.Stages[j]
				rec := x.call(ctx, ph, stageKey(ph.ID, i, st, j), st, scope)
				calls[i] = append(calls[i], rec)
				out = rec.Output
				if out == nil {
					x.count(ph, func(n *Counts) { n.Queued = max(0, n.Queued-(len(ph.Stages)-j-1)) })
					if rest := stageNames(ph.Stages[j+1:], j+1); rest != "" && rec.Status != CallCancelled {
						x.skip(itemKey(ph.ID, i), fmt.Sprintf("%s skipped: stage %s yielded no result (%s)", rest, rec.Key, endedHow(&rec)))
					}
					break
				}
				scope["prev"] = out
				if st.ID != "" {
					scope[st.ID] = out
				}
			}
			outs[i] = out
		})
	}
	wg.Wait(ctx)
	for _, c := range calls {
		pr.Calls = append(pr.Calls, c...)
	}
	pr.Output = outs
	pr.Status, pr.Reason = itemsStatus(ctx, outs, pr.Calls)
	return pr
}

// stageNames names the stages from index from on ("" when none).
func stageNames(stages []Call, from int) string {
	var names []string
	for j := range stages {
		names = append(names, taskKey(&stages[j], from+j))
	}
	if len(names) == 0 {
		return ""
	}
	if len(names) == 1 {
		return "stage " + names[0]
	}
	return "stages " + strings.Join(names, ", ")
}

func itemsStatus(ctx context.Context, outs []any, calls []CallRecord) (string, string) {
	ok := 0
	for _, o := range outs {
		if o != nil {
			ok++
		}
	}
	if len(outs) > 0 && ok == 0 {
		if st, why := phaseStatus(ctx, calls); st == PhaseSkipped {
			return st, why
		}
		return PhaseFailed, fmt.Sprintf("none of the %d items came through every stage", len(outs))
	}
	if st, why := phaseStatus(ctx, calls); st == PhasePartial {
		return st, why
	}
	return PhaseDone, ""
}

// eachItems evaluates the items selector: a list (of any values), and
// whether its items are the user's (an each over the inputs).
func eachItems(ph *Phase, scope map[string]any) ([]any, bool, error) {
	sel, err := ParseSelector(ph.Each)
	if err != nil {
		return nil, false, err
	}
	v, mine, err := sel.eval(scope)
	if err != nil {
		return nil, false, err
	}
	switch l := v.(type) {
	case []any:
		return l, mine, nil
	case nil:
		return nil, false, fmt.Errorf("each: %s is null (the call that should give it yielded no result)", ph.Each)
	}
	if !mine {
		// The reason reaches a model outside any untrusted block (the
		// Workflow tool's phase lines): an agent's words stay out of it.
		return nil, false, fmt.Errorf("each: %s is not a list but %s (an agent's output: brood workflow show has it)", ph.Each, jsonKind(v))
	}
	return nil, false, fmt.Errorf("each: %s is not a list but %s", ph.Each, formatValue(v))
}

// jsonKind names the kind of a decoded JSON value.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case map[string]any:
		return "an object"
	}
	return "a number"
}

// untilQuiet repeats rounds of a call until quiet_rounds rounds in a row
// add no finding (by key), or max_rounds.
func (x *executor) untilQuiet(ctx context.Context, ph *Phase) PhaseResult {
	u := ph.UntilQuiet
	pr := PhaseResult{ID: ph.ID, Shape: "until_quiet"}
	base := x.scope()
	seen := []any{}
	keys := map[string]bool{}
	quiet := 0
	for round := 1; round <= u.maxRounds() && quiet < u.quietRounds() && ctx.Err() == nil; round++ {
		x.queue(ph, u.perRound())
		scope := with2(base)
		scope["seen"], scope["round"] = append([]any(nil), seen...), Own(round)
		recs := make([]CallRecord, u.perRound())
		wg := x.rt.NewGroup(ctx)
		for i := range recs {
			wg.Add(1)
			x.rt.Go(ctx, func(ctx context.Context) {
				defer wg.Done()
				recs[i] = x.call(ctx, ph, roundKey(ph.ID, round, i), &u.Call, scope)
			})
		}
		wg.Wait(ctx)
		pr.Calls, pr.Rounds = append(pr.Calls, recs...), round
		added := 0
		for _, r := range recs {
			for _, f := range findings(r.Output, u.findingsField()) {
				k := keyOf(f, u.Key)
				if k == "" || keys[k] {
					continue
				}
				keys[k] = true
				seen = append(seen, f)
				added++
			}
		}
		if added == 0 {
			quiet++
		} else {
			quiet = 0
		}
	}
	pr.Output = seen
	pr.Status, pr.Reason = phaseStatus(ctx, pr.Calls)
	return pr
}

// findings is the list under field of an output.
func findings(out any, field string) []any {
	m, _ := out.(map[string]any)
	l, _ := m[field].([]any)
	return l
}

// keyOf is a finding's dedupe key: its key field as text.
func keyOf(f any, key string) string {
	m, ok := f.(map[string]any)
	if !ok {
		return canonical(f)
	}
	v, ok := m[key]
	if !ok || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return canonical(v)
}

func canonical(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
