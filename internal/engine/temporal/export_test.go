package temporal

import (
	"context"
	"crypto/ed25519"
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
