package temporal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/dispatch"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// countingStore is a store that counts the reads of each key.
type countingStore struct {
	temporal.Store
	reads map[string]*atomic.Int64
}

func (c *countingStore) ReadAll(ctx context.Context, ref temporal.Ref) ([]byte, error) {
	if n, ok := c.reads[ref.Key]; ok {
		n.Add(1)
	}
	return c.Store.ReadAll(ctx, ref)
}

// byRef is s with its payload put in store and only its reference kept.
func byRef(t *testing.T, store temporal.Store, key *temporal.Signer, s *temporal.Signed) *temporal.Signed {
	t.Helper()
	ref, err := store.PutBytes(t.Context(), s.Payload)
	if err != nil {
		t.Fatal(err)
	}
	return &temporal.Signed{Ref: &ref, RefSig: key.SignRef(ref), Key: s.Key, Sig: s.Sig}
}

// overwrite replaces the object at key in a file store under dir.
func overwrite(t *testing.T, dir, key string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(key))
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAdmitReadsTheSignedPayloadByRef: a submission that travels by
// reference is read from the store through its Ref and its signature
// checked over those bytes: a forged signature with a good reference, bytes
// changed in the store, a reference that is not a content address, and a
// worker with no store are refused. What verified is kept: a run's calls
// read the payload once.
func TestAdmitReadsTheSignedPayloadByRef(t *testing.T) {
	key, pub := newKey(t)
	lim := temporal.CallLimits{Heartbeat: 10 * time.Second, Timeout: time.Minute, KillGrace: 2 * time.Second, Attempts: 2}
	info := temporal.CallInfo{Workflow: "brood-call-T1", Queue: "q", Heartbeat: 10 * time.Second, StartToClose: time.Minute, Attempt: 1}
	spec := call.Spec{Agent: "explore", Prompt: "answer yes", TaskID: "T1"}
	signed, err := key.Sign(temporal.Submission{Kind: "call", Workflow: info.Workflow, Queue: "q", Spec: &spec, Limits: map[string]temporal.CallLimits{"": lim}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	store := &temporal.DirStore{Dir: dir}
	good := byRef(t, store, key, signed)
	forged := *good
	forged.Sig = append([]byte(nil), good.Sig...)
	forged.Sig[3] ^= 1
	notAddress := *good
	notAddress.Ref = &temporal.Ref{Key: "fleet/claims/" + good.Ref.SHA256, Size: good.Ref.Size, SHA256: good.Ref.SHA256}
	notAddress.RefSig = key.SignRef(*notAddress.Ref)
	// A trusted key's name on a reference it did not sign: refused before
	// the store is read (neither retried nor read, whatever the ref names).
	unsignedRef := *good
	unsignedRef.RefSig = nil
	forgedRef := *good
	forgedRef.RefSig = append([]byte(nil), good.RefSig...)
	forgedRef.RefSig[5] ^= 1
	changedStore := &temporal.DirStore{Dir: t.TempDir()}
	changed := byRef(t, changedStore, key, signed)
	overwrite(t, changedStore.Dir, changed.Ref.Key, []byte(strings.Replace(string(signed.Payload), "answer yes", "answer no!", 1)))
	cases := []struct {
		name   string
		signed *temporal.Signed
		store  temporal.Store
		want   string // "" accepted
	}{
		{"by reference", good, store, ""},
		{"inline", signed, nil, ""},
		{"forged signature, good reference", &forged, store, "changed after it was signed"},
		{"changed in the store", changed, changedStore, "does not match its reference: it was changed in the store"},
		{"not a content address", &notAddress, store, "not a content address"},
		{"reference not signed", &unsignedRef, store, "without that key's signature over the reference"},
		{"reference signature forged", &forgedRef, store, "without that key's signature over the reference"},
		{"reference not signed, not in the store", &unsignedRef, &temporal.DirStore{Dir: t.TempDir()}, "without that key's signature over the reference"},
		{"worker without a store", good, nil, "this worker has none"},
		{"missing from the store", good, &temporal.DirStore{Dir: t.TempDir()}, "is not in the fleet store"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			trust := temporal.NewTrust()
			if err := trust.Add(pub, "test"); err != nil {
				t.Fatal(err)
			}
			err := trust.Admit(t.Context(), tc.store, temporal.CallInput{Spec: spec, Signed: tc.signed}, info)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want refused saying %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("a refusal of more than one line: %q", err)
			}
		})
	}

	// One worker, many calls of a run: the payload is read and checked once.
	trust := temporal.NewTrust()
	if err := trust.Add(pub, "test"); err != nil {
		t.Fatal(err)
	}
	counting := &countingStore{Store: store, reads: map[string]*atomic.Int64{good.Ref.Key: {}}}
	for range 50 {
		if err := trust.Admit(t.Context(), counting, temporal.CallInput{Spec: spec, Signed: good}, info); err != nil {
			t.Fatal(err)
		}
	}
	// A forged signature is not what was verified: refused, read again.
	if err := trust.Admit(t.Context(), counting, temporal.CallInput{Spec: spec, Signed: &forged}, info); err == nil {
		t.Fatal("a forged signature was admitted after the good one")
	}
	// A reference the key did not sign costs no read at all.
	if err := trust.Admit(t.Context(), counting, temporal.CallInput{Spec: spec, Signed: &forgedRef}, info); err == nil {
		t.Fatal("a forged reference signature was admitted")
	}
	if n := counting.reads[good.Ref.Key].Load(); n != 2 {
		t.Fatalf("the payload was read %d times for 50 calls and a forgery; want once, and once for the forgery", n)
	}
}

// TestSignedPayloadStoreErrorIsRetried: a call whose signed payload the
// store does not give (missing: another store, a store slow to show it) is
// tried again; one whose payload is not what its reference names is
// refused and not retried. Neither runs anything.
func TestSignedPayloadStoreErrorIsRetried(t *testing.T) {
	key, pub := newKey(t)
	trust := temporal.NewTrust()
	if err := trust.Add(pub, "test"); err != nil {
		t.Fatal(err)
	}
	id := dispatch.NewID()
	spec := call.Spec{Agent: "explore", Prompt: "x", TaskID: id}
	signed, err := key.Sign(temporal.Submission{Kind: "call", Workflow: "w", Queue: "q", Spec: &spec})
	if err != nil {
		t.Fatal(err)
	}
	corrupt := &temporal.DirStore{Dir: t.TempDir()}
	bad := byRef(t, corrupt, key, signed)
	overwrite(t, corrupt.Dir, bad.Ref.Key, []byte("{}"))
	for _, tc := range []struct {
		name      string
		store     temporal.Store
		retryable bool
	}{
		{"missing", &temporal.DirStore{Dir: t.TempDir()}, true},
		{"corrupt", corrupt, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			a := &temporal.Activities{Store: tc.store, ProjectRoot: t.TempDir(), Trust: trust, Runner: runnerFunc(func(context.Context, call.Spec) (*call.Result, error) {
				ran = true
				return nil, errors.New("ran")
			})}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions(a.Call, activity.RegisterOptions{Name: temporal.CallActivityName})
			_, err := env.ExecuteActivity(temporal.CallActivityName, temporal.CallInput{Spec: spec, Signed: bad})
			var app *sdktemporal.ApplicationError
			if !errors.As(err, &app) || app.NonRetryable() == tc.retryable {
				t.Fatalf("got %v (%T); want retryable %v", err, err, tc.retryable)
			}
			if ran {
				t.Fatal("the call ran")
			}
		})
	}
}
