package temporal

// The claim check: payloads too large for Temporal's history (results,
// patches, transcripts; the server refuses blobs over 2 MiB by default and
// warns from 256 KiB) are put in the shared store and only a reference
// travels through the history. Nothing is ever cut, and a reference reads
// back only as the exact payload it was made from (size and SHA-256 are
// checked by blobstore).
//
// Two ways to wire it, with the same store layout (content-addressed
// sha256/.. objects holding the serialized commonpb.Payload):
//
//	// preferred: the SDK's external storage (v1.51, experimental), set on
//	// the client every worker and the submitter dial with:
//	client.Options{ExternalStorage: temporal.ExternalStorage(store, 0)}
//
//	// or a codec in the data converter (also what the SDK's test workflow
//	// environment, which has no external storage, can use):
//	converter.NewCodecDataConverter(converter.GetDefaultDataConverter(),
//		temporal.NewClaimCheckCodec(store, 0))
//
// Both ends must use the same store URL (the `store` setting).

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/broodhq/brood/internal/blobstore"
)

// DefaultClaimThreshold is the payload size (serialized) above which a
// payload is stored by reference: the SDK's default, well under the
// server's 2 MiB blob limit so a call's inputs together stay small too.
const DefaultClaimThreshold = 256 << 10

// MaxClaimSize bounds a payload read back from the store: a reference
// naming more is refused unread. The SDK decodes an activity's input
// before any brood code runs, so before the worker checks its signature:
// without a bound, whoever can schedule an activity (a stand-in, no key)
// had every worker that polled it read any object of the store whole.
const MaxClaimSize = 64 << 20

// claimEncoding marks a codec-encoded payload that holds a reference.
const claimEncoding = "binary/brood-claim-check"

// claimTimeout bounds one store operation where the SDK gives no context.
const claimTimeout = 5 * time.Minute

// ClaimCheck is a converter.StorageDriver over a blobstore.Store.
type ClaimCheck struct {
	store *blobstore.Store
}

var _ converter.StorageDriver = (*ClaimCheck)(nil)

// NewClaimCheck returns the storage driver for store.
func NewClaimCheck(store *blobstore.Store) *ClaimCheck { return &ClaimCheck{store: store} }

// ExternalStorage is the client option that routes every payload over
// threshold bytes (0: DefaultClaimThreshold) to store.
func ExternalStorage(store *blobstore.Store, threshold int) converter.ExternalStorage {
	if threshold <= 0 {
		threshold = DefaultClaimThreshold
	}
	return converter.ExternalStorage{Drivers: []converter.StorageDriver{NewClaimCheck(store)}, PayloadSizeThreshold: threshold}
}

// Name identifies the driver in claims.
func (c *ClaimCheck) Name() string { return "brood-store" }

// Type names the kind of driver.
func (c *ClaimCheck) Type() string { return "brood-blobstore" }

// Store puts each payload in the store and returns a claim naming it.
func (c *ClaimCheck) Store(sc converter.StorageDriverStoreContext, payloads []*commonpb.Payload) ([]converter.StorageDriverClaim, error) {
	claims := make([]converter.StorageDriverClaim, len(payloads))
	for i, p := range payloads {
		ref, err := c.put(sc.Context, p)
		if err != nil {
			return nil, err
		}
		claims[i] = converter.StorageDriverClaim{ClaimData: map[string]string{
			"key": ref.Key, "size": strconv.FormatInt(ref.Size, 10), "sha256": ref.SHA256,
		}}
	}
	return claims, nil
}

// Retrieve reads each claimed payload back, verified.
func (c *ClaimCheck) Retrieve(rc converter.StorageDriverRetrieveContext, claims []converter.StorageDriverClaim) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(claims))
	for i, cl := range claims {
		size, err := strconv.ParseInt(cl.ClaimData["size"], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("claim check: claim %v has no valid size", cl.ClaimData)
		}
		ref := blobstore.Ref{Key: cl.ClaimData["key"], Size: size, SHA256: cl.ClaimData["sha256"]}
		if out[i], err = c.get(rc.Context, ref); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (c *ClaimCheck) put(ctx context.Context, p *commonpb.Payload) (blobstore.Ref, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	data, err := proto.Marshal(p)
	if err != nil {
		return blobstore.Ref{}, fmt.Errorf("claim check: %w", err)
	}
	ref, err := c.store.PutBytes(ctx, data)
	if err != nil {
		return blobstore.Ref{}, fmt.Errorf("claim check: store a %d-byte payload: %w", len(data), err)
	}
	return ref, nil
}

func (c *ClaimCheck) get(ctx context.Context, ref blobstore.Ref) (*commonpb.Payload, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if ref.Size < 0 || ref.Size > MaxClaimSize {
		return nil, fmt.Errorf("claim check: the payload %s is %d bytes, more than the %d a payload may be: refused unread", ref.Key, ref.Size, MaxClaimSize)
	}
	data, err := c.store.ReadAll(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("claim check: %w", err)
	}
	p := &commonpb.Payload{}
	if err := proto.Unmarshal(data, p); err != nil {
		return nil, fmt.Errorf("claim check: %s is not a payload: %w", ref.Key, err)
	}
	return p, nil
}

// ClaimCheckCodec is the same claim check as a converter.PayloadCodec.
type ClaimCheckCodec struct {
	c         *ClaimCheck
	threshold int
}

var _ converter.PayloadCodec = (*ClaimCheckCodec)(nil)

// NewClaimCheckCodec returns a codec that stores payloads over threshold
// bytes (0: DefaultClaimThreshold) in store.
func NewClaimCheckCodec(store *blobstore.Store, threshold int) *ClaimCheckCodec {
	if threshold <= 0 {
		threshold = DefaultClaimThreshold
	}
	return &ClaimCheckCodec{c: NewClaimCheck(store), threshold: threshold}
}

// Encode replaces each payload over the threshold with a reference.
func (k *ClaimCheckCodec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if proto.Size(p) <= k.threshold {
			out[i] = p
			continue
		}
		ref, err := k.c.put(ctx, p)
		if err != nil {
			return nil, err
		}
		data, _ := json.Marshal(ref)
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(claimEncoding)}, Data: data}
	}
	return out, nil
}

// Decode restores each referenced payload.
func (k *ClaimCheckCodec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	ctx, cancel := context.WithTimeout(context.Background(), claimTimeout)
	defer cancel()
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != claimEncoding {
			out[i] = p
			continue
		}
		var ref blobstore.Ref
		if err := json.Unmarshal(p.GetData(), &ref); err != nil {
			return nil, fmt.Errorf("claim check: a reference payload does not parse: %w", err)
		}
		got, err := k.c.get(ctx, ref)
		if err != nil {
			return nil, err
		}
		out[i] = got
	}
	return out, nil
}
