package spawn

import (
	"bytes"
	"compress/flate"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/broodhq/brood/internal/trust"
)

// A guard's record holds the exact bytes it must put back, .git/config
// among them, and .git/config can hold credentials: a url.<x>.insteadOf
// with user:password@, an http.extraHeader with a token, a credential
// helper's argument. They cannot be redacted (the put-back must write
// them back as they were), so the record keeps its states encrypted
// (AES-256-GCM) under a key derived from the user's record key, which
// lives in the user's state directory, outside the project: a copy,
// backup or archive of the project, or a .brood/records left after the
// user took a credential out of .git/config, carries none of them in the
// clear. Nothing prints a record (brood tasks lists no guards; the lines
// of a put-back name files, never their content).

// guardEncKind separates the encryption key from the seal's (both come
// from the record key).
const guardEncKind = "guard-states-v2"

// guardAEAD is the cipher of a guard record's states.
func guardAEAD(recordKey []byte) (cipher.AEAD, error) {
	m := hmac.New(sha256.New, recordKey)
	m.Write([]byte(guardEncKind))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// guardAAD binds the states to the record they are in.
func guardAAD(rec *guardRecord) []byte { return []byte(rec.TaskID + "\x00" + rec.Project) }

// maxGuardStates bounds the states a record's Enc inflates to (the
// guards keep at most 16 MiB of files a state, in base64 in the JSON).
const maxGuardStates = 256 << 20

// sealStates moves rec's states into rec.Enc: their JSON, deflated (the
// JSON holds the files in base64, and submodules' hooks are mostly the
// same files: review P2-1), then encrypted.
func sealStates(key []byte, rec *guardRecord) error {
	js, err := json.Marshal(rec.States)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression)
	if _, err := zw.Write(js); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	plain := buf.Bytes()
	aead, err := guardAEAD(key)
	if err != nil {
		return err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	rec.Enc, rec.States = aead.Seal(nonce, nonce, plain, guardAAD(rec)), nil
	return nil
}

// openStates puts rec's encrypted states back in rec.States (a record
// without Enc keeps its plain ones: one an earlier brood wrote).
func openStates(key []byte, rec *guardRecord) error {
	if rec.Enc == nil {
		return nil
	}
	aead, err := guardAEAD(key)
	if err != nil {
		return err
	}
	if len(rec.Enc) < aead.NonceSize() {
		return errors.New("guard record: its states are cut short")
	}
	plain, err := aead.Open(nil, rec.Enc[:aead.NonceSize()], rec.Enc[aead.NonceSize():], guardAAD(rec))
	if err != nil {
		return err
	}
	js, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(plain)), maxGuardStates+1))
	if err != nil {
		return fmt.Errorf("guard record: its states do not inflate: %w", err)
	}
	if len(js) > maxGuardStates {
		return fmt.Errorf("guard record: its states inflate to over %d bytes", maxGuardStates)
	}
	var states []trust.StateRecord
	if err := json.Unmarshal(js, &states); err != nil {
		return err
	}
	rec.States, rec.Enc = states, nil
	return nil
}
