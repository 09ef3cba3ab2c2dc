package modeltest

import (
	"net/http"
	"testing"

	"github.com/broodhq/brood/internal/model/fakewire"
)

// NewOpenAI starts a fake OpenAI-compatible Chat Completions server serving
// replies in order. s.URL ends in /v1; it answers POST /v1/chat/completions.
// Thinking in a Reply is ignored: Chat Completions has no such block.
func NewOpenAI(t testing.TB, replies ...Reply) *Server {
	s := newServer(t, "/v1/chat/completions", writeOpenAI, replies)
	s.URL += "/v1"
	return s
}

func writeOpenAI(w http.ResponseWriter, rec Recorded, r Reply) {
	fakewire.WriteOpenAI(w, rec.N, fakewire.RequestModel(rec.Body), r)
}
