package workflow

import (
	"strconv"
	"strings"
)

// A plan call's key, as the executor names its journal entries and
// records (the fleet's workers check a call against the signed plan by
// it: CallsOfKey). Each form is built here only, and parsed back here.

// taskKey is how a parallel call or an each's stage is named within its
// phase: its id, else its index.
func taskKey(t *Call, j int) string {
	if t.ID != "" {
		return t.ID
	}
	return strconv.Itoa(j)
}

// parallelKey is the key of parallel call j (t) of phase ph: PHASE/ID or
// PHASE/INDEX.
func parallelKey(ph string, t *Call, j int) string { return ph + "/" + taskKey(t, j) }

// itemKey is the key prefix of item i of an each phase ph: PHASE/ITEM.
func itemKey(ph string, i int) string { return ph + "/" + strconv.Itoa(i) }

// stageKey is the key of stage j (t) of item i of an each phase ph:
// PHASE/ITEM/ID or PHASE/ITEM/INDEX.
func stageKey(ph string, i int, t *Call, j int) string { return itemKey(ph, i) + "/" + taskKey(t, j) }

// roundKey is the key of call i of round r of an until_quiet phase ph:
// PHASE/rROUND/I.
func roundKey(ph string, r, i int) string { return ph + "/r" + strconv.Itoa(r) + "/" + strconv.Itoa(i) }

// voteKey is the key of ballot n (from 1) of a votes phase ph: PHASE/vN.
func voteKey(ph string, n int) string { return ph + "/v" + strconv.Itoa(n) }

// CallsOfKey is the call of plan p whose records key names, as the
// executor keys them (parallelKey, stageKey, roundKey, voteKey), one per
// phase whose id fits (none: the key names no call of p).
func CallsOfKey(p *Plan, key string) []*Call {
	var out []*Call
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
func phaseKeyCalls(ph *Phase, rest string) []*Call {
	switch {
	case ph.Votes != nil:
		if n, ok := strings.CutPrefix(rest, "v"); ok && number(n) {
			return []*Call{&ph.Votes.Call}
		}
	case ph.UntilQuiet != nil:
		round, i, ok := strings.Cut(rest, "/")
		if r, isRound := strings.CutPrefix(round, "r"); ok && isRound && number(r) && number(i) {
			return []*Call{&ph.UntilQuiet.Call}
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

// callByKey are the calls of cs the executor keys k (taskKey: its id,
// else its index).
func callByKey(cs []Call, k string) []*Call {
	var out []*Call
	for j := range cs {
		if taskKey(&cs[j], j) == k {
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
