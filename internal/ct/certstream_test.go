package ct

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/ct/cttest"
)

func TestReadCertstream(t *testing.T) {
	f, err := os.Open("testdata/certstream.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var got []CertstreamUpdate
	var rejects []cert.Reject
	err = ReadCertstream(f, "certstream.ndjson", func(u CertstreamUpdate) error {
		got = append(got, u)
		return nil
	}, func(r cert.Reject) { rejects = append(rejects, r) })
	if err != nil {
		t.Fatal(err)
	}
	want := []CertstreamUpdate{
		{Index: 123456789, Source: "https://oak.ct.letsencrypt.org/2026h1/", SourceName: "Let's Encrypt 'Oak2026h1' log",
			Seen: time.Unix(1736000001, 250000000).UTC(), Domains: []string{"letsencrypt.org", "www.letsencrypt.org"}},
		{Index: 42, Source: "https://ct.example/log/", SourceName: "Example", Seen: time.Unix(1736000002, 0).UTC(),
			Precert: true, Domains: []string{"*.example.com", "example.com"}},
		{Index: -1, Domains: []string{"a.example.net", "b.example.net"}},
		{Index: 7, Source: "u", Domains: []string{"broken.example"}},
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(CertstreamUpdate{}, "Cert")); diff != "" {
		t.Errorf("updates (-want +got):\n%s", diff)
	}
	if len(got) == 4 {
		if got[0].Cert == nil || got[0].Cert.SubjectCN != "letsencrypt.org" || got[0].Cert.IssuerOrg != "Let's Encrypt" {
			t.Errorf("first update's certificate = %+v", got[0].Cert)
		}
		if got[1].Cert != nil || got[3].Cert != nil {
			t.Error("certificate without as_der or with bad as_der")
		}
	}
	wantRejects := []struct {
		line   int
		reason string
	}{{6, "bad JSON"}, {7, `unknown message_type "something_else"`}, {8, "as_der"}}
	if len(rejects) != len(wantRejects) {
		t.Fatalf("rejects = %v, want %d", rejects, len(wantRejects))
	}
	for i, w := range wantRejects {
		if rejects[i].Line != w.line || !strings.Contains(rejects[i].Reason, w.reason) {
			t.Errorf("reject %d = %v, want line %d with %q", i, rejects[i], w.line, w.reason)
		}
	}
}

func TestReadCertstreamLongLine(t *testing.T) {
	in := `{"message_type":"heartbeat"}` + "\n" + strings.Repeat("x", maxCertstreamLine+5) + "\n" +
		`{"message_type":"dns_entries","data":["ok.example"]}`
	var got []CertstreamUpdate
	var rejects []cert.Reject
	if err := ReadCertstream(strings.NewReader(in), "in", func(u CertstreamUpdate) error {
		got = append(got, u)
		return nil
	}, func(r cert.Reject) { rejects = append(rejects, r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Domains[0] != "ok.example" || len(rejects) != 1 || rejects[0].Line != 2 {
		t.Errorf("got %v, rejects %v", got, rejects)
	}
}

func FuzzCertstreamMessage(f *testing.F) {
	data, err := os.ReadFile("testdata/certstream.ndjson")
	if err != nil {
		f.Fatal(err)
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		u, ok, _ := ParseCertstreamMessage(msg)
		if !ok && (u.Cert != nil || len(u.Domains) > 0) {
			t.Fatalf("unusable message returned data: %+v", u)
		}
	})
}

// BenchmarkFollower measures entries/s through the client and follower from
// a local log of b.N real certificate entries (leaf plus chain), batches of
// 256 asked for and at most 256 answered.
func BenchmarkFollower(b *testing.B) {
	chains := loadChains(b)
	log := cttest.New()
	defer log.Close()
	log.SetMaxBatch(256)
	const size = 20000
	for i := range size {
		c := chains[i%len(chains)]
		if err := log.AddCert(c[0], c[1:]...); err != nil {
			b.Fatal(err)
		}
	}
	client, err := NewClient(log.URL(), Options{BatchSize: 256})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	total := 0
	for b.Loop() {
		n := 0
		err := (&Follower{Client: client}).Run(context.Background(), &MemoryCheckpoint{}, func(e Entry) error {
			if e.Err != nil {
				return e.Err
			}
			n++
			return nil
		})
		if err != nil || n != size {
			b.Fatalf("read %d of %d: %v", n, size, err)
		}
		total += n
	}
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(size, "log-entries")
}
