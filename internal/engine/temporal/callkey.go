package temporal

import (
	"strconv"
	"strings"

	wf "github.com/broodhq/brood/internal/workflow"
)

// keyCalls is the call of plan p whose records key names, as the plan's
// executor keys them (a parallel call: PHASE/ID or PHASE/INDEX; an each's
// stage: PHASE/ITEM/ID or PHASE/ITEM/INDEX; an until_quiet's:
// PHASE/rROUND/I; a vote: PHASE/vN), one per phase whose id fits (none:
// the key names no call of p). A worker admits a plan call only as that
// call (planCovers), so the key its result's signature names (callBind)
// is a call of the signed plan whose template the brief fills.
func keyCalls(p *wf.Plan, key string) []*wf.Call {
	var out []*wf.Call
	for i := range p.Phases {
		ph := &p.Phases[i]
		rest, ok := strings.CutPrefix(key, ph.ID+"/")
		if !ok {
			continue
		}
		out = append(out, phaseKeyCalls(ph, rest)...)
	}
	return out
}

// phaseKeyCalls are the calls of ph that rest (the key after PHASE/)
// names.
func phaseKeyCalls(ph *wf.Phase, rest string) []*wf.Call {
	switch {
	case ph.Votes != nil:
		if n, ok := strings.CutPrefix(rest, "v"); ok && number(n) {
			return []*wf.Call{&ph.Votes.Call}
		}
	case ph.UntilQuiet != nil:
		round, i, ok := strings.Cut(rest, "/")
		if r, isRound := strings.CutPrefix(round, "r"); ok && isRound && number(r) && number(i) {
			return []*wf.Call{&ph.UntilQuiet.Call}
		}
	case len(ph.Stages) > 0:
		item, stage, ok := strings.Cut(rest, "/")
		if ok && number(item) {
			return callByKey(ph.Stages, stage)
		}
	default:
		return callByKey(ph.Parallel, rest)
	}
	return nil
}

// callByKey are the calls of cs the executor keys k (its id, else its
// index).
func callByKey(cs []wf.Call, k string) []*wf.Call {
	var out []*wf.Call
	for j := range cs {
		if cs[j].ID == k || cs[j].ID == "" && strconv.Itoa(j) == k {
			out = append(out, &cs[j])
		}
	}
	return out
}

// number: s is a decimal index (no sign, no leading zero but "0").
func number(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && strconv.Itoa(n) == s
}
