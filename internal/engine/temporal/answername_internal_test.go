package temporal

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/broodhq/brood/internal/blobstore"
)

// TestNamedAnswerTakenOnlySigned: a final answer named in the store
// (answername.go) is created once, and a retry continues from it only
// when a worker key it trusts signed it as the final answer (a claim of
// its own, not a heartbeat's) of this very execution, activity and input,
// for an earlier attempt and the call's own task, and it goes at least as
// far as the heartbeat the retry has: anyone can write the store, and a
// record that is not so is ignored (the retry continues from its
// heartbeat). A heartbeat copied under the name (its signature a
// continuation's, as an older worker's records were too) is never taken,
// nor a record over a finished attempt's stored result (review44 P3-1).
// A first attempt reads nothing.
func TestNamedAnswerTakenOnlySigned(t *testing.T) {
	ctx := context.Background()
	info := CallInfo{Namespace: "default", Workflow: "brood-run-x", Run: "run-1", Activity: "7", Attempt: 2, Heartbeat: 3 * time.Second, Bind: callBind{Brief: "in-1"}}
	own, friend, stranger := seeded(1), seeded(2), seeded(3)
	trusted := NewTrust()
	if err := trusted.Add(friend.Public(), "test"); err != nil {
		t.Fatal(err)
	}
	earlier := info
	earlier.Attempt = 1
	beat := func(task string, pos int64) Heartbeat {
		return Heartbeat{TaskID: task, Worker: "w", Transcript: Ref{Key: "sha256/ab", Size: pos, SHA256: "ab"}, Position: pos}
	}
	// answer is the record a worker with key s names for in.
	answer := func(s *Signer, in CallInfo, task string, pos int64) AnswerRecord {
		rec := AnswerRecord{Version: answerVersion, Answer: beat(task, pos)}
		if s != nil {
			rec.Final = NewWorkerKeys(s, nil).signFinal(in, rec.Answer)
		}
		return rec
	}
	// copied is a heartbeat of the call, signed as heartbeats are, put
	// under the answer's name by one who writes the store.
	copied := func(old bool) any {
		hb := beat("t1", 90)
		NewWorkerKeys(friend, nil).sign(earlier, &hb)
		if old { // an older worker's record: the heartbeat itself
			return hb
		}
		return AnswerRecord{Version: answerVersion, Answer: Heartbeat{TaskID: hb.TaskID, Worker: hb.Worker, Transcript: hb.Transcript, Position: hb.Position}, Final: hb.Signed}
	}
	with := func(rec AnswerRecord, f func(*AnswerRecord)) AnswerRecord { f(&rec); return rec }
	otherRun, otherActivity, otherInput := earlier, earlier, earlier
	otherRun.Run, otherActivity.Activity, otherInput.Bind.Brief = "run-0", "8", "in-2"
	same := earlier
	same.Attempt = 2
	finished := beat("t1", 90)
	finished.Result = Ref{Key: "sha256/cd", Size: 10, SHA256: "cd"}
	cases := []struct {
		name  string
		named any
		at    Heartbeat // the heartbeat the retry has
		take  bool
	}{
		{"a friend's, earlier attempt", answer(friend, earlier, "t1", 90), Heartbeat{}, true},
		{"its own, earlier attempt", answer(own, earlier, "t1", 90), beat("t1", 40), true},
		{"a stranger's", answer(stranger, earlier, "t1", 90), Heartbeat{}, false},
		{"unsigned", answer(nil, earlier, "t1", 90), Heartbeat{}, false},
		{"another execution's", answer(friend, otherRun, "t1", 90), Heartbeat{}, false},
		{"another activity's", answer(friend, otherActivity, "t1", 90), Heartbeat{}, false},
		{"another input's", answer(friend, otherInput, "t1", 90), Heartbeat{}, false},
		{"this attempt's own number", answer(friend, same, "t1", 90), Heartbeat{}, false},
		{"another task's", answer(friend, earlier, "t2", 90), Heartbeat{}, false},
		{"behind the heartbeat", answer(friend, earlier, "t1", 90), beat("t1", 120), false},
		{"over a finished attempt's result at its position", answer(friend, earlier, "t1", 90), finished, false},
		{"a heartbeat's signature under the name", copied(false), Heartbeat{}, false},
		{"an older worker's record (a heartbeat)", copied(true), Heartbeat{}, false},
		{"another version", with(answer(friend, earlier, "t1", 90), func(r *AnswerRecord) { r.Version = 2 }), Heartbeat{}, false},
		{"moved on", with(answer(friend, earlier, "t1", 90), func(r *AnswerRecord) { r.Answer.Position = 95 }), Heartbeat{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			store, err := blobstore.Open(ctx, "file://"+t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			a := &Activities{Store: store, Keys: NewWorkerKeys(own, trusted)}
			key := answerPrefix + "k"
			if _, err := store.Create(ctx, key, mustJSON(t, tc.named)); err != nil {
				t.Fatal(err)
			}
			got, ok := a.namedAnswer(ctx, key, info, "t1", tc.at)
			if ok != tc.take || ok && got.Position != 90 {
				t.Fatalf("taken %v (%+v); want %v", ok, got, tc.take)
			}
			first := info
			first.Attempt = 1
			if _, ok := a.namedAnswer(ctx, key, first, "t1", Heartbeat{}); ok {
				t.Error("a first attempt took a named answer")
			}
			// Create-once: the name taken, this worker's answer goes by
			// its heartbeat.
			if a.nameAnswer(ctx, key, info, beat("t1", 200)) {
				t.Error("named an answer over a record already there")
			}
		})
	}
	store, err := blobstore.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	a := &Activities{Store: store, Keys: NewWorkerKeys(own, trusted)}
	if _, ok := a.namedAnswer(ctx, answerPrefix+"none", info, "t1", Heartbeat{}); ok {
		t.Error("took an answer where none is named")
	}
	if !a.nameAnswer(ctx, answerPrefix+"new", earlier, beat("t1", 90)) {
		t.Fatal("could not name an answer where none is")
	}
	if _, ok := a.namedAnswer(ctx, answerPrefix+"new", info, "t1", Heartbeat{}); !ok {
		t.Error("a retry did not take the answer its worker named")
	}
	if (&Activities{Store: store}).nameAnswer(ctx, answerPrefix+"unsigned", earlier, beat("t1", 90)) {
		t.Error("a worker without keys named an answer")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
