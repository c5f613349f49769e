package hoststore_test

import (
	"context"
	"testing"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hostquery"
	"github.com/periscope-oss/periscope/internal/hoststore"
)

// EachJSON hands out the stored documents as they are, which must be the
// canonical JSON of the hosts Page decodes, in the same order.
func TestEachJSONIsCanonical(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		searchFixture(t, s)
		e, err := hostquery.ParsePlan("domain:example.com -port:22")
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.MatchHosts(ctx, e)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := m.Page(ctx, 0, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		if err := m.EachJSON(ctx, func(js []byte) error { got = append(got, string(js)); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(hs) || len(hs) != 17 { // 15 odd hosts, example.com, a.b.example.com
			t.Fatalf("%d documents, %d hosts", len(got), len(hs))
		}
		for i, h := range hs {
			want, err := h.CanonicalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if got[i] != string(want) {
				t.Errorf("document %d:\n got %s\nwant %s", i, got[i], want)
			}
			var back host.Host
			if err := host.DecodeJSON([]byte(got[i]), &back); err != nil || back.Host != h.Host {
				t.Errorf("document %d does not decode to %s: %v", i, h.Host, err)
			}
		}
	})
}
