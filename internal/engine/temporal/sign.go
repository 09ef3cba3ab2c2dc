package temporal

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/broodhq/brood/internal/call"
	"github.com/broodhq/brood/internal/codesnap"
	"github.com/broodhq/brood/internal/dispatch"
	wf "github.com/broodhq/brood/internal/workflow"
)

// Signed submissions (DESIGN.md, "fleet trust"): anyone who can reach the
// Temporal frontend can start a workflow on a task queue, or act as a
// worker of it and schedule activities with inputs of their choosing. A
// worker therefore runs a call only when the activity's own input carries
// a submission signed by a key in the worker's allowlist, and the call is
// the one that submission describes (signcheck.go).

// KeyPrefix starts a public key's text form: "brood-ed25519 BASE64 [comment]".
const KeyPrefix = "brood-ed25519"

// signContext separates a submission's signature from any other use of
// the key.
const signContext = "brood fleet submission v1\x00"

// refSignContext separates the signature over a payload's store reference
// from the payload's own.
const refSignContext = "brood fleet submission ref v1\x00"

// refSigned is what RefSig signs: the reference's key, size and SHA-256.
func refSigned(r Ref) []byte {
	return fmt.Appendf([]byte(refSignContext), "%s\n%d\n%s", r.Key, r.Size, r.SHA256)
}

// SignRef is the signer's signature over the store reference r to a
// payload it signed (Signed.RefSig).
func (s *Signer) SignRef(r Ref) []byte { return ed25519.Sign(s.key, refSigned(r)) }

// Submission is what a submitter signs: the brief (a call's spec, or a
// plan with its inputs), the agent (by name: the worker's own definition
// of it runs, never a shipped one), the snapshot of its tree (tree object
// and the store digests of its patch and bundle), the remote it names, the
// limits, and the workflow and task queue it runs under.
type Submission struct {
	Version int `json:"v"`
	// Kind is "call" (brood subagent) or "plan" (brood workflow run).
	Kind string `json:"kind"`
	// Workflow is the workflow id the submission runs under.
	Workflow string `json:"workflow"`
	Queue    string `json:"queue"`
	// Namespace is the Temporal namespace it runs in (empty: a submitter
	// from before namespaces were signed; any).
	Namespace string `json:"namespace,omitempty"`
	// Spec is a call's (Kind "call").
	Spec *call.Spec `json:"spec,omitempty"`
	// From is where a resumed call continues from (its last heartbeat).
	From *Heartbeat `json:"from,omitempty"`
	// Froms are a resumed plan's: by task, the continuation (From) of
	// each call a cancel stopped, pinned to the execution its resume read
	// (frompin.go).
	Froms map[string]string `json:"froms,omitempty"`
	// Plan and Inputs are a plan's (Kind "plan").
	Plan   *wf.Plan       `json:"plan,omitempty"`
	Inputs map[string]any `json:"inputs,omitempty"`
	// Limits per agent type ("" for the default).
	Limits map[string]CallLimits `json:"limits"`
	// Code is the submitter's tree (nil: the workers' own checkouts).
	Code *codesnap.Snapshot `json:"code,omitempty"`
	// Workers are the worker keys whose results a plan's workflow uses
	// (RunInput.Workers; nil: not checked).
	Workers *WorkerSet `json:"workers,omitempty"`
	// Versions are the workflow versions the run's replay must have taken
	// (RunInput.Versions), signed so a restart cannot drop them.
	Versions map[string]int `json:"versions,omitempty"`
	// Carried are a resumed plan's: by task, the execution whose signed
	// result the resume checked and carries (RunInput.Carried).
	Carried map[string]string `json:"carried,omitempty"`
	// Tip is a resumed plan's tree as the resume checked it and carries
	// it (RunInput.Tip at the execution's start; nil: Code).
	Tip *codesnap.Snapshot `json:"tip,omitempty"`
	// At is when it was signed.
	At time.Time `json:"at"`
	// MaxCalls is the most calls its run may start (callbound.go): a
	// worker refuses a call numbered past it. Sign sets it when zero.
	MaxCalls int `json:"max_calls,omitempty"`
}

// Signed is a submission as it travels in a workflow's and each
// activity's input: the exact bytes signed (or where they are in the
// fleet's store), the signer's public key and the signature.
//
// A submitter with a store puts the payload there once and only Ref
// travels, so a call's input stays the same size whatever the plan's
// (signref.go); without one (no code shipped), and in histories from
// before refs, the payload travels inline.
type Signed struct {
	// Payload is the exact bytes signed (inline; nil when Ref names them).
	Payload []byte `json:"payload,omitempty"`
	// Ref is the payload in the fleet's store, by its content address:
	// its SHA-256 binds the bytes, which the signature then covers.
	Ref *Ref `json:"ref,omitempty"`
	// RefSig is the same key's signature over Ref (refSigned): a worker
	// checks it before it reads anything from the store, so a submission
	// naming a trusted key with a forged signature costs it no store read.
	RefSig []byte `json:"ref_sig,omitempty"`
	Key    []byte `json:"key"`
	Sig    []byte `json:"sig"`
}

// Signer is a submitter's key.
type Signer struct {
	key ed25519.PrivateKey
}

// Sign signs a submission.
func (s *Signer) Sign(sub Submission) (*Signed, error) {
	if s == nil {
		return nil, nil
	}
	sub.Version = 1
	if sub.MaxCalls <= 0 {
		sub.MaxCalls = sub.callBound()
	}
	data, err := json.Marshal(sub)
	if err != nil {
		return nil, fmt.Errorf("sign the submission: %w", err)
	}
	pub := s.key.Public().(ed25519.PublicKey)
	return &Signed{Payload: data, Key: pub, Sig: ed25519.Sign(s.key, append([]byte(signContext), data...))}, nil
}

// Public is the signer's public key in its text form.
func (s *Signer) Public() string { return FormatPublicKey(s.key.Public().(ed25519.PublicKey), "") }

// Fingerprint names a public key in messages: SHA256:base64.
func Fingerprint(pub []byte) string {
	sum := sha256.Sum256(pub)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(sum[:])
}

// FormatPublicKey is a public key's one-line text form.
func FormatPublicKey(pub ed25519.PublicKey, comment string) string {
	s := KeyPrefix + " " + base64.StdEncoding.EncodeToString(pub)
	if comment = strings.TrimSpace(comment); comment != "" {
		s += " " + comment
	}
	return s
}

// ParsePublicKey reads "brood-ed25519 BASE64 [comment]".
func ParsePublicKey(line string) (ed25519.PublicKey, error) {
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != KeyPrefix {
		return nil, fmt.Errorf("not a brood public key (want %q followed by the key, as `brood fleet keygen` prints it)", KeyPrefix+" BASE64")
	}
	b, err := base64.StdEncoding.DecodeString(f[1])
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("the key after %s is not a base64 ed25519 public key (32 bytes)", KeyPrefix)
	}
	return ed25519.PublicKey(b), nil
}

// KeyDir is where a user's fleet keys live: ~/.config/brood/fleet.
func KeyDir(home string) string { return filepath.Join(home, ".config", "brood", "fleet") }

// Key files in KeyDir.
const (
	PrivateKeyFile  = "submitter.key"
	PublicKeyFile   = "submitter.pub"
	TrustedKeysFile = "trusted_keys"
)

// GenerateKey makes a key pair in dir: the private key (PKCS#8 PEM, mode
// 0600, dir 0700) and its public key (one line), each written tmp+rename.
// An existing key is kept unless force.
func GenerateKey(dir, comment string, force bool) (string, error) {
	return generateKeyAs(dir, PrivateKeyFile, PublicKeyFile, comment, force)
}

// generateKeyAs is GenerateKey for the key files privName and pubName.
func generateKeyAs(dir, privName, pubName, comment string, force bool) (string, error) {
	priv := filepath.Join(dir, privName)
	if _, err := os.Lstat(priv); err == nil && !force {
		return "", keyExists(priv)
	}
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	if err := writePrivate(priv, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), force); err != nil {
		return "", err
	}
	line := FormatPublicKey(pub, comment)
	if err := dispatch.WriteFileAtomic(filepath.Join(dir, pubName), []byte(line+"\n")); err != nil {
		return "", err
	}
	return line, nil
}

// keyExists is the refusal to replace a key file that exists. It is
// fs.ErrExist, so a worker's first start that finds the key made by a
// second start meanwhile loads that key (LoadWorkerKey).
type keyExists string

func (k keyExists) Error() string {
	return string(k) + " exists: brood keeps it (workers trust its public key); pass --force to replace it"
}

func (keyExists) Is(target error) bool { return target == fs.ErrExist }

// LoadSigner reads a private key file; (nil, nil) when there is none.
// A key others can read is refused.
func LoadSigner(path string) (*Signer, error) {
	info, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: the fleet signing key is readable by others (mode %v): chmod 600 it", path, info.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("%s: not a PEM private key (make one with brood fleet keygen)", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	key, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an ed25519 key (make one with brood fleet keygen)", path)
	}
	return &Signer{key: key}, nil
}

// Trust is a worker's allowlist of submitter keys.
type Trust struct {
	keys map[string]string // public key bytes -> where it was named
	// AllowUnsigned runs every submission, signed or not, by anyone (brood
	// worker --allow-unsigned: a dev server only you can reach).
	AllowUnsigned bool
	// verified are the submissions this worker verified (signref.go).
	verified verifiedCache
}

// NewTrust is an empty allowlist.
func NewTrust() *Trust { return &Trust{keys: map[string]string{}} }

// Len is how many keys it trusts.
func (t *Trust) Len() int { return len(t.keys) }

// Add trusts one key given as its text form, or the file holding it (or
// several, one per line; # starts a comment). from names where it was
// given, for errors.
func (t *Trust) Add(arg, from string) error {
	if strings.HasPrefix(strings.TrimSpace(arg), KeyPrefix) {
		return t.addLine(arg, from)
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return fmt.Errorf("%s: %q is neither a public key (%s ...) nor a file with one: %v", from, arg, KeyPrefix, err)
	}
	return t.addFile(arg, data)
}

// AddFile trusts the keys in a file, one per line; a missing file adds
// none. The file (trusted_keys, trusted_workers) and its directory must be
// the worker's user's and writable by no one else (strictFile): whoever
// can add a line there runs calls on the worker, or hands them
// conversations.
func (t *Trust) AddFile(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if err := strictFile(path); err != nil {
		return err
	}
	return t.addFile(path, data)
}

func (t *Trust) addFile(path string, data []byte) error {
	n := 0
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := t.addLine(line, fmt.Sprintf("%s:%d", path, i+1)); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s: no public key in it (one %s line per trusted key; remove the file to trust none)", path, KeyPrefix)
	}
	return nil
}

func (t *Trust) addLine(line, from string) error {
	pub, err := ParsePublicKey(line)
	if err != nil {
		return fmt.Errorf("%s: %w", from, err)
	}
	if t.keys == nil {
		t.keys = map[string]string{}
	}
	t.keys[string(pub)] = from
	return nil
}

// trusts reports whether pub is in the allowlist.
func (t *Trust) trusts(pub []byte) bool {
	_, ok := t.keys[string(pub)]
	return ok
}
