package vulnstore_test

import (
	"testing"

	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// each runs fn as a subtest on fresh vulnerability tables of every engine.
func each(t *testing.T, fn func(t *testing.T, s *vulnstore.Store)) {
	for _, e := range storetest.Engines() {
		t.Run(e, func(t *testing.T) { fn(t, vulnstore.New(storetest.Open(t, e, vulnstore.Migrations()))) })
	}
}
