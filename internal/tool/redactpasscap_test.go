package tool

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// TestPassedSecretsAreCapped: what a parent passes in the memory file is
// bounded (a value over 4 KiB is not passed, nor more than 256 KiB in
// all), so a huge environment does not cost each spawn (review P3-7);
// the parent still redacts every value.
func TestPassedSecretsAreCapped(t *testing.T) {
	hexOf := func(n int) string {
		b := make([]byte, n/2)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(b)
	}
	big := hexOf(5000)
	env := []string{"BIG_TOKEN=" + big}
	var last string
	for i := range 400 {
		last = hexOf(1000)
		env = append(env, fmt.Sprintf("X%d_TOKEN=%s", i, last))
	}
	r := NewProjectRedactor(env, t.TempDir())
	total := 0
	for _, p := range r.passedSecrets() {
		if len(p.Value) > maxPassedValue {
			t.Errorf("%s passed: %d bytes", p.Label, len(p.Value))
		}
		total += len(p.Value)
	}
	if total == 0 || total > maxPassedTotal {
		t.Errorf("passed %d bytes in all, want 1 to %d", total, maxPassedTotal)
	}
	for _, v := range []string{big, last} {
		if out := r.Redact("x " + v + " y"); strings.Contains(out, v) {
			t.Errorf("the parent no longer redacts a %d-byte value", len(v))
		}
	}
}
