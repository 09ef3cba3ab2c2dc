package temporal

import (
	"bytes"
	"context"
	"crypto/ed25519"
)

// SignResultAsFleetWorker signs out as the test workers' shared key (seed)
// does for the call of activity ctx: a stand-in with a genuine signature.
func SignResultAsFleetWorker(ctx context.Context, seed byte, in CallInput, worker string, out *CallOutput) {
	k := NewWorkerKeys(&Signer{key: ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))}, nil)
	k.signResult(callInfo(ctx, in), worker, out)
}
