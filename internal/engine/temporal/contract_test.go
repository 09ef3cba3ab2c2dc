package temporal_test

import (
	"testing"

	"github.com/broodhq/brood/internal/engine"
	"github.com/broodhq/brood/internal/engine/enginetest"
	"github.com/broodhq/brood/internal/engine/temporal"
)

// TestTemporalEngineMeetsTheContract runs the engine contract against a
// real dev server, with one worker (its own repository) per engine.
func TestTemporalEngineMeetsTheContract(t *testing.T) {
	enginetest.Run(t, enginetest.Fixture{New: func(t *testing.T, script string) engine.Engine {
		srv := sharedServer(t)
		c := srv.Client(t)
		q := newQueue(t)
		store := &temporal.DirStore{Dir: t.TempDir()}
		startWorker(t, c, q, script, 4, store)
		return newEngineIn(c, q, t.TempDir())
	}})
}
