package testbrood

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"

	"github.com/broodhq/brood/internal/engine/temporal"
)

// FleetSeed is the seed of the worker key a test's brood workers share
// unless the test gives one its own (WorkerKey): the workers of a fleet
// that trust each other, as an operator sets them up.
const FleetSeed byte = 1

// WorkerKey writes the worker key made from seed (32 bytes of it) into
// home's fleet directory, as brood worker reads it, and returns its public
// key line (what another worker trusts).
func WorkerKey(t testing.TB, home string, seed byte) string {
	t.Helper()
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := temporal.KeyDir(home)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, temporal.WorkerKeyFile), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return temporal.FormatPublicKey(key.Public().(ed25519.PublicKey), "")
}

// FleetWorkerKey gives a worker in home the fleet's shared key (FleetSeed)
// unless it has a key already.
func FleetWorkerKey(t testing.TB, home string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(temporal.KeyDir(home), temporal.WorkerKeyFile)); err == nil {
		return
	}
	WorkerKey(t, home, FleetSeed)
}

// TrustFleetWorkers has the user in home take the results the fleet's
// shared worker key (FleetSeed) signs, as a team's submitter trusts its
// workers (brood fleet trust-worker), unless home lists worker keys already.
func TrustFleetWorkers(t testing.TB, home string) {
	t.Helper()
	dir := temporal.KeyDir(home)
	if _, err := os.Stat(filepath.Join(dir, temporal.TrustedWorkersFile)); err == nil {
		return
	}
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{FleetSeed}, ed25519.SeedSize))
	if _, err := temporal.TrustWorker(dir, temporal.FormatPublicKey(key.Public().(ed25519.PublicKey), "")); err != nil {
		t.Fatal(err)
	}
}
