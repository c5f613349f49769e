package vulngen_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/vulngen"
	"github.com/periscope-oss/periscope/internal/vulningest"
	"github.com/periscope-oss/periscope/internal/vulnstore"
)

// TestGeneratedFeedsParse checks every generated feed is read without a
// rejection by the real parsers and stores the stated counts.
func TestGeneratedFeedsParse(t *testing.T) {
	s := vulnstore.New(storetest.Open(t, "sqlite", vulnstore.Migrations()))
	g, err := vulngen.New(500, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), 1)
	if err != nil {
		t.Fatal(err)
	}
	in := &vulningest.Ingester{Store: s}
	for _, c := range []struct {
		kind  string
		write func(*bytes.Buffer) error
		want  int
	}{
		{vulningest.NVD, func(b *bytes.Buffer) error { return g.WriteNVD(b) }, 500},
		{vulningest.OSV, func(b *bytes.Buffer) error { return g.WriteOSVZip(b, 200) }, 200},
		{vulningest.KEV, func(b *bytes.Buffer) error { return g.WriteKEV(b, 10) }, 50},
		{vulningest.EPSS, func(b *bytes.Buffer) error { return g.WriteEPSS(b) }, 500},
		{vulningest.ExploitDB, func(b *bytes.Buffer) error { return g.WriteExploitDB(b, 100) }, 100},
	} {
		var buf bytes.Buffer
		if err := c.write(&buf); err != nil {
			t.Fatal(err)
		}
		sum, err := in.IngestReader(context.Background(), c.kind, c.kind, &buf, nil)
		if err != nil || sum.Rejected != 0 || sum.Inserted != c.want {
			t.Errorf("%s: %+v %v", c.kind, sum, err)
		}
	}
	if len(g.Vocabulary()) < 100 || len(g.SampleCPEs()) == 0 || len(g.Ecosystems()) < 2 {
		t.Errorf("vocabulary %d, cpes %d, ecosystems %v", len(g.Vocabulary()), len(g.SampleCPEs()), g.Ecosystems())
	}
}
