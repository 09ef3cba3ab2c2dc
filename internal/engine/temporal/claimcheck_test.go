package temporal

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/broodhq/brood/internal/blobstore"
)

func claimStore(t *testing.T) (*blobstore.Store, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := blobstore.Open(t.Context(), "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

func bigPayload(t *testing.T, n int) *commonpb.Payload {
	data := make([]byte, n)
	rand.Read(data)
	return &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("binary/plain")}, Data: data}
}

func TestClaimCheckCodec(t *testing.T) {
	s, dir := claimStore(t)
	codec := NewClaimCheckCodec(s, 0)
	small := &commonpb.Payload{Metadata: map[string][]byte{"encoding": []byte("json/plain")}, Data: []byte(`"hi"`)}
	big := bigPayload(t, 5<<20)
	enc, err := codec.Encode([]*commonpb.Payload{small, big})
	if err != nil {
		t.Fatal(err)
	}
	if enc[0] != small {
		t.Fatal("a small payload was not left inline")
	}
	if got := len(enc[1].Data); got > 1024 {
		t.Fatalf("the large payload still travels inline (%d bytes)", got)
	}
	dec, err := codec.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dec[1].Data, big.Data) || string(dec[1].Metadata["encoding"]) != "binary/plain" {
		t.Fatalf("decoded %d bytes, want the %d-byte payload whole", len(dec[1].Data), len(big.Data))
	}
	// A changed blob is refused, never decoded into something else.
	objs, _ := filepath.Glob(filepath.Join(dir, "sha256", "*", "*"))
	if len(objs) != 1 {
		t.Fatalf("objects in store: %v", objs)
	}
	raw, _ := os.ReadFile(objs[0])
	raw[len(raw)-1] ^= 1
	os.WriteFile(objs[0], raw, 0o644)
	if _, err := codec.Decode(enc); !errors.Is(err, blobstore.ErrCorrupt) {
		t.Fatalf("tampered claim: %v; want ErrCorrupt", err)
	}
}

func TestClaimCheckDriver(t *testing.T) {
	s, _ := claimStore(t)
	d := NewClaimCheck(s)
	ps := []*commonpb.Payload{bigPayload(t, 3<<20), bigPayload(t, 300<<10)}
	claims, err := d.Store(converter.StorageDriverStoreContext{Context: t.Context()}, ps)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Retrieve(converter.StorageDriverRetrieveContext{Context: t.Context()}, claims)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ps {
		if !bytes.Equal(got[i].Data, ps[i].Data) {
			t.Fatalf("payload %d: %d bytes back, want %d", i, len(got[i].Data), len(ps[i].Data))
		}
	}
	claims[0].ClaimData["sha256"] = strings.Repeat("0", 64)
	if _, err := d.Retrieve(converter.StorageDriverRetrieveContext{Context: t.Context()}, claims); !errors.Is(err, blobstore.ErrCorrupt) {
		t.Fatalf("forged claim: %v; want ErrCorrupt", err)
	}
}

// temporalCLI finds the Temporal CLI the test command installs.
func temporalCLI(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("temporal"); err == nil {
		return p
	}
	out, _ := exec.Command("go", "env", "GOPATH").Output()
	p := filepath.Join(strings.TrimSpace(string(out)), "bin", "temporal")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("the Temporal CLI is not installed (go install github.com/temporalio/cli/cmd/temporal@v1.5.1): %v", err)
	}
	return p
}

func bigResultWorkflow(ctx workflow.Context, n int) ([]byte, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	var out []byte
	err := workflow.ExecuteActivity(ctx, bigResultActivity, n).Get(ctx, &out)
	return out, err
}

func bigResultActivity(ctx context.Context, n int) ([]byte, error) {
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(i*7 + i/251)
	}
	return out, nil
}

// TestClaimCheckOnServer runs a workflow whose activity returns 5 MiB (over
// the server's 2 MiB blob limit, which would fail the activity) on a real
// dev server: it comes back whole, through the store.
func TestClaimCheckOnServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	s, dir := claimStore(t)
	var logs bytes.Buffer
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: temporalCLI(t),
		ClientOptions: &client.Options{
			Namespace:       "default",
			ExternalStorage: ExternalStorage(s, 0),
		},
		LogLevel: "error",
		Stdout:   &logs, Stderr: &logs,
	})
	if err != nil {
		t.Fatalf("dev server: %v\n%s", err, logs.String())
	}
	defer srv.Stop()
	c := srv.Client()
	w := worker.New(c, "claim-check", worker.Options{})
	w.RegisterWorkflow(bigResultWorkflow)
	w.RegisterActivity(bigResultActivity)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	const n = 5 << 20
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: "claim-check"}, bigResultWorkflow, n)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	if err := run.Get(ctx, &got); err != nil {
		t.Fatal(err)
	}
	want, _ := bigResultActivity(ctx, n)
	if !bytes.Equal(got, want) {
		t.Fatalf("result: %d bytes, want %d equal bytes", len(got), n)
	}
	objs, _ := filepath.Glob(filepath.Join(dir, "sha256", "*", "*"))
	if len(objs) == 0 {
		t.Fatal("nothing went through the store")
	}
}

// TestClaimCheckReadsNoMoreThanItMay: a reference naming more than
// MaxClaimSize is refused before the store is read (the object need not
// even exist), by the codec and by the SDK's storage driver; one within
// it reads back.
func TestClaimCheckReadsNoMoreThanItMay(t *testing.T) {
	store, _ := claimStore(t)
	small := bigPayload(t, 4<<10)
	k := NewClaimCheckCodec(store, 1<<10)
	enc, err := k.Encode([]*commonpb.Payload{small})
	if err != nil {
		t.Fatal(err)
	}
	sum := strings.Repeat("ab", 32)
	cases := []struct {
		name string
		ref  blobstore.Ref
		want string // "" read back
	}{
		{"within the bound", blobstore.Ref{}, ""},
		{"over the bound", blobstore.Ref{Key: "sha256/ab/" + sum, Size: MaxClaimSize + 1, SHA256: sum}, "more than the"},
		{"a negative size", blobstore.Ref{Key: "sha256/ab/" + sum, Size: -1, SHA256: sum}, "more than the"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := enc[0]
			if tc.want != "" {
				data, _ := json.Marshal(tc.ref)
				p = &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(claimEncoding)}, Data: data}
			}
			got, err := k.Decode([]*commonpb.Payload{p})
			switch {
			case tc.want == "" && (err != nil || !bytes.Equal(got[0].GetData(), small.GetData())):
				t.Fatalf("got %v; want the payload back", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, blobstore.ErrNotFound)):
				t.Fatalf("got %v; want refused unread saying %q", err, tc.want)
			}
			if tc.want == "" {
				return
			}
			_, err = NewClaimCheck(store).Retrieve(converter.StorageDriverRetrieveContext{Context: t.Context()},
				[]converter.StorageDriverClaim{{ClaimData: map[string]string{"key": tc.ref.Key, "size": strconv.FormatInt(tc.ref.Size, 10), "sha256": sum}}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("the driver: %v; want refused unread", err)
			}
		})
	}
}
