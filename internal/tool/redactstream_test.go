package tool

import (
	"strings"
	"testing"
)

// TestStreamRedactsAcrossPieces: a secret (or a key) streamed in pieces,
// split anywhere, goes out as its marker and no piece carries any part of
// it long enough to tell (red team 21 P2-9).
func TestStreamRedactsAcrossPieces(t *testing.T) {
	r := NewRedactor([]string{"DB_PASSWORD=correct horse battery staple", "MY_SERVICE_TOKEN=Zq9XvB7kLmN3pQrS8tUwYz1aBcDeFgH2"})
	key := "ghp_" + strings.Repeat("Ab1", 12)
	tests := []struct{ name, text, secret, marker string }{
		{"words", "the password is correct horse battery staple ok", "correct horse battery staple", "[REDACTED:DB_PASSWORD]"},
		{"token", "token Zq9XvB7kLmN3pQrS8tUwYz1aBcDeFgH2 end " + strings.Repeat("x", 80), "Zq9XvB7kLmN3pQrS8tUwYz1aBcDeFgH2", "[REDACTED:MY_SERVICE_TOKEN]"},
		{"key format", strings.Repeat("y ", 50) + key + " and more " + strings.Repeat("z", 100), key, "[REDACTED:github]"},
	}
	for _, tt := range tests {
		for _, size := range []int{1, 2, 3, 5, 8, 13} {
			s := r.Stream()
			var pieces []string
			for i := 0; i < len(tt.text); i += size {
				pieces = append(pieces, s.Push(tt.text[i:min(i+size, len(tt.text))]))
			}
			pieces = append(pieces, s.Flush())
			got := strings.Join(pieces, "")
			if want := r.Redact(tt.text); got != want || !strings.Contains(got, tt.marker) {
				t.Fatalf("%s, pieces of %d: %q, want %q", tt.name, size, got, want)
			}
			for _, p := range pieces {
				for n := 6; n <= len(tt.secret); n++ {
					if strings.Contains(p, tt.secret[:n]) || strings.Contains(p, tt.secret[len(tt.secret)-n:]) {
						t.Fatalf("%s, pieces of %d: piece %q holds part of the secret", tt.name, size, p)
					}
				}
			}
		}
	}
	var none *Redactor
	if s := none.Stream(); s.Push("a") != "a" || s.Flush() != "" {
		t.Error("a nil redactor's stream changed the text")
	}
}
