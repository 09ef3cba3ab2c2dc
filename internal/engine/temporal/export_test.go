package temporal

import (
	"bytes"
	"context"
	"crypto/ed25519"

	historypb "go.temporal.io/api/history/v1"
)

// SignResultAs signs out as a worker whose key is seeded from seed would,
// for the activity ctx runs (a test's stand-in for brood worker's key).
func SignResultAs(ctx context.Context, seed byte, in CallInput, out *CallOutput) {
	NewWorkerKeys(seeded(seed), nil).signResult(callInfo(ctx, in), "bench:1", out)
}

// SeededPublic is the public key SignResultAs signs with for seed.
func SeededPublic(seed byte) []byte {
	return []byte(seeded(seed).key.Public().(ed25519.PublicKey))
}

// SignResultAsFleetWorker signs out as the test workers' shared key (seed)
// does for the call of activity ctx: a stand-in with a genuine signature.
func SignResultAsFleetWorker(ctx context.Context, seed byte, in CallInput, worker string, out *CallOutput) {
	k := NewWorkerKeys(&Signer{key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))}, nil)
	k.signResult(callInfo(ctx, in), worker, out)
}

// ReplayRunHistory is what a submitter takes of run id's execution exec
// whose history is h: brood's own replay of it (replayRun).
func ReplayRunHistory(h *historypb.History, id, exec string) (*RunOutput, error) {
	got, err := New(Config{}).replayRunHistory(id, exec, h, nil)
	return &got.out, err
}

// RecordDir is the directory of the checkout holding dir's records of key
// (a task's sent.json, a run's landed.json): landDir.
func RecordDir(ctx context.Context, dir, key string) (string, error) {
	return landDir(ctx, dir, key)
}
