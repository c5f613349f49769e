package hostingest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/hostingest"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/scan"
	"github.com/periscope-oss/periscope/internal/store"
	"github.com/periscope-oss/periscope/internal/store/storetest"
)

const (
	cityDB = "../enrich/testdata/GeoIP2-City-Test.mmdb"
	asnDB  = "../enrich/testdata/GeoLite2-ASN-Test.mmdb"
)

func newIngester(t *testing.T, s *hoststore.Store) (*hostingest.Ingester, *[]string) {
	e, err := hostingest.NewEnricher(hostingest.Config{GeoIPCity: cityDB, GeoIPASN: asnDB})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	var observed []string
	in := &hostingest.Ingester{Store: s, Enricher: e, Batch: 2, TxHosts: 2, Observe: func(_ context.Context, names []string) error {
		observed = append(observed, names...)
		return nil
	}}
	return in, &observed
}

// Observations are enriched from the MMDB files and the built-in provider
// ranges, stored in batches, reported to the observer, and a second ingest
// of the same input changes nothing.
func TestIngestEnrichesAndIsIdempotent(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{hoststore.Migrations()}, hoststore.New, func(t *testing.T, s *hoststore.Store) {
		in, observed := newIngester(t, s)
		input := strings.Join([]string{
			`{"host":"london.example.com","ip_address":"81.2.69.142","network_ports":[443]}`,
			`{"host":"edge.example.com","ip_address":"104.16.1.1"}`,
			`{"host":"aws.example.org","dns":{"a":["52.95.110.1"]}}`,
			`{"host":"telstra.example.net","ip_address":"1.128.0.1"}`,
			`{"host":"bad host name"}`,
		}, "\n")
		sum, err := in.Ingest(t.Context(), scan.Native, "test.ndjson", strings.NewReader(input), nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Read != 5 || sum.Inserted != 4 || sum.Rejected != 1 || len(sum.Rejects) != 1 || !strings.HasPrefix(sum.Rejects[0], "test.ndjson:5: ") {
			t.Fatalf("summary %+v", sum)
		}
		slices.Sort(*observed)
		if want := []string{"aws.example.org", "edge.example.com", "london.example.com", "telstra.example.net"}; !slices.Equal(*observed, want) {
			t.Fatalf("observed %v, want %v", *observed, want)
		}
		h, err := s.Host(t.Context(), "london.example.com")
		if err != nil {
			t.Fatal(err)
		}
		if h.IPMetadata.CityName != "London" || h.IPMetadata.CountryCode != "GB" {
			t.Errorf("london: geo %+v", h.IPMetadata)
		}
		if h, _ := s.Host(t.Context(), "edge.example.com"); h.CDN != "cloudflare" || !h.IsCloudflare || !h.IsCDN {
			t.Errorf("edge: cdn %q cloudflare %v", h.CDN, h.IsCloudflare)
		}
		if h, _ := s.Host(t.Context(), "aws.example.org"); h.Cloud.Provider != "aws" || !h.IsCloud {
			t.Errorf("aws: cloud %+v", h.Cloud)
		}
		if h, _ := s.Host(t.Context(), "telstra.example.net"); h.IPMetadata.ASN != 1221 {
			t.Errorf("telstra: asn %d", h.IPMetadata.ASN)
		}

		*observed = nil
		sum, err = in.Ingest(t.Context(), scan.Native, "test.ndjson", strings.NewReader(input), nil)
		if err != nil || sum.Unchanged != 4 || sum.Inserted != 0 || sum.Updated != 0 || len(*observed) != 0 {
			t.Fatalf("second ingest: %v %+v observed %v", err, sum, *observed)
		}
	})
}

// An nmap file cut off inside a host: the hosts of the batches before the
// cut stay stored, and the error names the source.
func TestIngestTruncatedKeepsStoredBatches(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{hoststore.Migrations()}, hoststore.New, func(t *testing.T, s *hoststore.Store) {
		// One host a batch, and the default batches: the host read
		// before the cut is stored either way.
		for _, batch := range []int{1, 0} {
			in, _ := newIngester(t, s)
			in.Batch = batch
			in.KeepPrivate = true // the host before the cut is 127.0.0.1
			f, err := os.Open("../scan/testdata/nmap_truncated.xml")
			if err != nil {
				t.Fatal(err)
			}
			sum, err := in.Ingest(t.Context(), scan.Nmap, "nmap_truncated.xml", f, nil)
			f.Close()
			if err == nil || !strings.Contains(err.Error(), "nmap_truncated.xml") {
				t.Fatalf("batch %d: want an error naming the file, got %v", batch, err)
			}
			if sum.Inserted+sum.Unchanged+sum.Updated < 1 {
				t.Fatalf("batch %d: the host before the cut was not stored: %+v", batch, sum)
			}
			if _, err := s.Host(t.Context(), "127.0.0.1"); err != nil {
				t.Fatalf("batch %d: host before the cut: %v", batch, err)
			}
		}
	})
}

// cancelReader gives its first lines, then cancels and gives the rest.
type cancelReader struct {
	parts  []string
	cancel context.CancelFunc
}

func (r *cancelReader) Read(p []byte) (int, error) {
	if len(r.parts) == 0 {
		return 0, io.EOF
	}
	if len(r.parts) == 1 {
		time.Sleep(200 * time.Millisecond) // the writer has the first lines in an open transaction
		r.cancel()
	}
	n := copy(p, r.parts[0])
	r.parts[0] = r.parts[0][n:]
	if r.parts[0] == "" {
		r.parts = r.parts[1:]
	}
	return n, nil
}

// A cancelled ingest says so, and stores nothing of its open transaction.
func TestIngestCancelledSaysSo(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{hoststore.Migrations()}, hoststore.New, func(t *testing.T, s *hoststore.Store) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		var first, rest strings.Builder
		for i := range 10 {
			fmt.Fprintf(&first, `{"host":"c%d.example.com"}`+"\n", i)
			fmt.Fprintf(&rest, `{"host":"d%d.example.com"}`+"\n", i)
		}
		in := &hostingest.Ingester{Store: s, Batch: 1, TxHosts: 1000}
		_, err := in.Ingest(ctx, scan.Native, "x", &cancelReader{parts: []string{first.String(), rest.String()}, cancel: cancel}, nil)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled ingest: %v", err)
		}
		if _, err := s.Host(t.Context(), "c0.example.com"); err == nil {
			t.Error("a host of the rolled-back transaction is stored")
		}
	})
}

// An observer error stops the ingest; what was stored stays.
func TestIngestObserverErrorStops(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{hoststore.Migrations()}, hoststore.New, func(t *testing.T, s *hoststore.Store) {
		in := &hostingest.Ingester{Store: s, Batch: 1, TxHosts: 1, Observe: func(context.Context, []string) error {
			return context.DeadlineExceeded
		}}
		_, err := in.Ingest(t.Context(), scan.Native, "x", strings.NewReader(`{"host":"a.example.com"}`+"\n"+`{"host":"b.example.com"}`), nil)
		if err == nil {
			t.Fatal("observer error was swallowed")
		}
		if _, err := s.Host(t.Context(), "a.example.com"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Host(t.Context(), "b.example.com"); err == nil {
			t.Fatal("ingest went on after the observer failed")
		}
	})
}

// Batches share a transaction: a host seen again in a later batch of the
// same transaction merges into the row the earlier one inserted, and its
// index terms follow; a failed batch rolls back its whole transaction and
// leaves earlier transactions stored.
func TestIngestBatchesShareATransaction(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{hoststore.Migrations()}, hoststore.New, func(t *testing.T, s *hoststore.Store) {
		in := &hostingest.Ingester{Store: s, Batch: 2, TxHosts: 100}
		input := strings.Join([]string{
			`{"host":"a.example.com","network_ports":[80],"last_seen":1700000000}`,
			`{"host":"b.example.com"}`,
			`{"host":"c.example.com"}`,
			`{"host":"a.example.com","network_ports":[443],"last_seen":1700000100}`,
			`{"host":"d.example.com"}`,
		}, "\n")
		sum, err := in.Ingest(t.Context(), scan.Native, "x", strings.NewReader(input), nil)
		if err != nil || sum.Inserted != 4 || sum.Updated != 1 {
			t.Fatalf("summary %+v, %v", sum, err)
		}
		for _, term := range []string{"port:80", "port:443"} {
			p, err := s.SearchHosts(t.Context(), hoststore.HostQuery{Terms: []string{term}, Limit: 10})
			if err != nil || p.Total != 1 || p.Hosts[0].Host != "a.example.com" || !slices.Equal(p.Hosts[0].NetworkPorts, []int{80, 443}) {
				t.Fatalf("%s: %+v %v", term, p, err)
			}
		}
		// A store error in the second transaction: the first stays.
		in = &hostingest.Ingester{Store: s, Batch: 1, TxHosts: 1}
		ctx, cancel := context.WithCancel(t.Context())
		n := 0
		in.Observe = func(context.Context, []string) error {
			if n++; n == 1 {
				cancel()
			}
			return nil
		}
		_, err = in.Ingest(ctx, scan.Native, "y", strings.NewReader(`{"host":"e.example.com"}`+"\n"+`{"host":"f.example.com"}`), nil)
		if err == nil {
			t.Fatal("a cancelled ingest reported success")
		}
		if _, err := s.Host(t.Context(), "e.example.com"); err != nil {
			t.Fatalf("first transaction: %v", err)
		}
		if _, err := s.Host(t.Context(), "f.example.com"); err == nil {
			t.Fatal("the cancelled transaction was stored")
		}
	})
}

func TestNewEnricherErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  hostingest.Config
		want string
	}{
		{hostingest.Config{GeoIPCity: "/nonexistent.mmdb"}, "--geoip-city /nonexistent.mmdb"},
		{hostingest.Config{GeoIPASN: "/nonexistent.mmdb"}, "--geoip-asn /nonexistent.mmdb"},
		{hostingest.Config{CloudRanges: "/nonexistent-dir"}, "--cloud-ranges"},
		{hostingest.Config{CloudRanges: t.TempDir()}, "holds no range file"},
		{hostingest.Config{GeoIPCity: "hostingest_test.go"}, "enrichment"},
	} {
		if _, err := hostingest.NewEnricher(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.cfg, err, c.want)
		}
	}
}

// Progress is reported after every batch, the open transaction's hosts
// included, not only at commits.
func TestIngestProgressEveryBatch(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{hoststore.Migrations()}, hoststore.New, func(t *testing.T, s *hoststore.Store) {
		in := &hostingest.Ingester{Store: s, Batch: 1, TxHosts: 1000}
		var seen []int
		in2 := `{"host":"p1.example.com"}` + "\n" + `{"host":"p2.example.com"}` + "\n" + `{"host":"p3.example.com"}` + "\n"
		sum, err := in.Ingest(t.Context(), scan.Native, "x", strings.NewReader(in2), func(p hostingest.Summary) {
			seen = append(seen, p.Inserted)
		})
		if err != nil || sum.Inserted != 3 {
			t.Fatalf("ingest: %+v %v", sum, err)
		}
		if fmt.Sprint(seen) != "[1 2 3]" {
			t.Errorf("progress reported inserted %v, want [1 2 3]", seen)
		}
	})
}

// Records whose host is a lab-private address are skipped and counted as
// such unless KeepPrivate is set; a public name resolving to a private
// address is kept (it says has_private_ip).
func TestIngestSkipsPrivateHosts(t *testing.T) {
	storetest.EachOf(t, []store.MigrationSet{hoststore.Migrations()}, hoststore.New, func(t *testing.T, s *hoststore.Store) {
		input := strings.Join([]string{
			`{"host":"10.0.0.5","ip_address":"10.0.0.5","network_ports":[22]}`,
			`{"host":"192.168.1.1","ip_address":"192.168.1.1"}`,
			`{"host":"127.0.0.1","ip_address":"127.0.0.1","network_ports":[80]}`,
			`{"host":"100.64.3.4"}`,
			`{"host":"fd00::1"}`,
			`{"host":"81.2.69.142","ip_address":"81.2.69.142","network_ports":[443]}`,
			`{"host":"intranet.example.com","ip_address":"10.1.2.3"}`,
		}, "\n")
		in, _ := newIngester(t, s)
		sum, err := in.Ingest(t.Context(), scan.Native, "lab.ndjson", strings.NewReader(input), nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Read != 7 || sum.Inserted != 2 || sum.Skipped != 5 || sum.SkippedPrivate != 5 || sum.SkippedBy[hostingest.SkipPrivate] != 5 {
			t.Fatalf("default: %+v", sum)
		}
		in.KeepPrivate = true
		sum, err = in.Ingest(t.Context(), scan.Native, "lab.ndjson", strings.NewReader(input), nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Inserted != 5 || sum.Unchanged != 2 || sum.SkippedPrivate != 0 {
			t.Fatalf("--keep-private: %+v", sum)
		}
	})
}
