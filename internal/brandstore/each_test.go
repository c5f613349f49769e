package brandstore_test

import (
	"testing"

	"github.com/periscope-oss/periscope/internal/brandstore"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// each runs fn as a subtest on fresh brand tables of every engine.
func each(t *testing.T, fn func(t *testing.T, s *brandstore.Store)) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) { fn(t, brandstore.New(storetest.Open(t, e, brandstore.Migrations()))) })
	}
}
