package hoststore_test

import (
	"testing"

	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// each runs fn as a subtest on fresh host tables of every engine.
func each(t *testing.T, fn func(t *testing.T, s *hoststore.Store)) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) { fn(t, hoststore.New(storetest.Open(t, e, hoststore.Migrations()))) })
	}
}
