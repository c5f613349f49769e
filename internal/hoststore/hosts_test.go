package hoststore_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/host"
	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

func TestUpsertHostsMerges(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		s.Core().Now = func() time.Time { return time.Unix(1700000000, 0) }
		st, err := s.UpsertHosts(ctx, []host.Host{
			{Host: "WWW.Example.COM.", IPAddress: "93.184.216.34", NetworkServices: []host.Service{{Port: 443, Service: "https", Product: "nginx"}}},
			{Host: "www.example.com", Tags: []string{"web"}}, // same host in one batch
			{Host: "bad..name"},
			{Host: "api.example.com", HTTPStatusCode: 200, FirstSeen: 1600000000, LastSeen: 1600000100},
		})
		if err != nil {
			t.Fatal(err)
		}
		if st.Inserted != 2 || st.Updated != 0 || st.Rejected != 1 || len(st.Rejects) != 1 {
			t.Fatalf("first batch stats = %+v", st)
		}
		h, err := s.Host(ctx, "www.example.com")
		if err != nil {
			t.Fatal(err)
		}
		if h.Domain != "example.com" || h.Subdomain != "www" || h.TLD != "com" || h.IPAddress != "93.184.216.34" ||
			!slices.Equal(h.NetworkPorts, []int{443}) || !slices.Equal(h.Tags, []string{"web"}) ||
			h.FirstSeen != 1700000000 || h.LastSeen != 1700000000 || !h.IsLive {
			t.Fatalf("stored host = %+v", h)
		}

		// A later observation lacking the service and the tag erases nothing.
		st, err = s.UpsertHosts(ctx, []host.Host{
			{Host: "www.example.com", HTTPTitle: "Example", NetworkServices: []host.Service{{Port: 80, Service: "http"}}},
			{Host: "api.example.com", HTTPStatusCode: 200, FirstSeen: 1600000000, LastSeen: 1600000100},
		})
		if err != nil {
			t.Fatal(err)
		}
		if st.Inserted != 0 || st.Updated != 1 || st.Unchanged != 1 || !slices.Equal(st.Names, []string{"www.example.com"}) {
			t.Fatalf("second batch stats = %+v", st)
		}
		h, _ = s.Host(ctx, "www.example.com")
		if !slices.Equal(h.NetworkPorts, []int{80, 443}) || !slices.Equal(h.Tags, []string{"web"}) || h.HTTPTitle != "Example" ||
			h.NetworkServices[1].Product != "nginx" {
			t.Fatalf("merged host = %+v", h)
		}

		// The same input again changes nothing.
		st, err = s.UpsertHosts(ctx, []host.Host{{Host: "www.example.com", HTTPTitle: "Example"}})
		if err != nil || st.Unchanged != 1 || st.Updated != 0 {
			t.Fatalf("re-ingest stats = %+v, %v", st, err)
		}

		if _, err := s.Host(ctx, "nope.example.com"); !periscope.IsNotFound(err) {
			t.Fatalf("unknown host: %v", err)
		}
		if _, err := s.Host(ctx, "not a name"); !periscope.IsNotFound(err) {
			t.Fatalf("invalid host: %v", err)
		}
		// A bare IP is a host of its own.
		if _, err := s.UpsertHosts(ctx, []host.Host{{Host: "198.51.100.7", NetworkPorts: []int{22}}}); err != nil {
			t.Fatal(err)
		}
		if h, err := s.Host(ctx, "198.51.100.7"); err != nil || h.IPAddress != "198.51.100.7" || h.Domain != "" {
			t.Fatalf("ip host = %+v, %v", h, err)
		}
	})
}

func TestUpsertHostsConcurrent(t *testing.T) {
	each(t, func(t *testing.T, s *hoststore.Store) {
		ctx := context.Background()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.UpsertHosts(ctx, []host.Host{
					{Host: "a.example.org", NetworkPorts: []int{1000 + i}},
					{Host: "b.example.org", Tags: []string{string(rune('a' + i))}},
				})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		a, _ := s.Host(ctx, "a.example.org")
		b, _ := s.Host(ctx, "b.example.org")
		if len(a.NetworkPorts) != 8 || len(b.Tags) != 8 {
			t.Fatalf("lost concurrent observations: ports %v tags %v", a.NetworkPorts, b.Tags)
		}
	})
}
