package whoislookup

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/rdap"
	"github.com/periscope-oss/periscope/internal/store/storetest"
	"github.com/periscope-oss/periscope/internal/whoisstore"
)

// ianaRewrite sends requests for data.iana.org to a local server playing IANA.
type ianaRewrite struct{ to *url.URL }

func (r ianaRewrite) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != "data.iana.org" {
		return nil, http.ErrNotSupported
	}
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
	return http.DefaultTransport.RoundTrip(req)
}

func TestRefreshBootstrap(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			iana := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				kind := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/rdap/"), ".json")
				if kind == "dns" {
					w.Write([]byte(`{"publication":"2026-11-01T00:00:00Z","services":[[["example"],["https://rdap.example.test/"]]]}`))
					return
				}
				w.Write(rdap.BundledRaw(kind))
			}))
			defer iana.Close()
			u, _ := url.Parse(iana.URL)
			st := whoisstore.New(storetest.Open(t, engine, whoisstore.Migrations()))
			client := &rdap.Client{HTTP: &http.Client{Transport: ianaRewrite{u}}}
			svc := New(Config{Store: st, RDAP: client, Now: func() time.Time { return time.Unix(1_800_000_000, 0) }})
			if got := svc.RDAP.Bootstrap().DomainURLs("nic.example"); len(got) != 0 {
				t.Fatalf("bundled snapshot already knows .example: %v", got)
			}
			if err := svc.RefreshBootstrap(ctx); err != nil {
				t.Fatal(err)
			}
			if got := svc.RDAP.Bootstrap().DomainURLs("nic.example"); len(got) != 1 || got[0] != "https://rdap.example.test/" {
				t.Fatalf("refreshed dns registry not in force: %v", got)
			}
			rows, err := st.Bootstraps(ctx)
			if err != nil || len(rows) != 4 {
				t.Fatalf("stored registries %d, %v", len(rows), err)
			}
			// A new process loads what was stored...
			fresh := New(Config{Store: st, RDAP: &rdap.Client{}})
			if err := fresh.LoadBootstrap(ctx); err != nil {
				t.Fatal(err)
			}
			if got := fresh.RDAP.Bootstrap().DomainURLs("nic.example"); len(got) != 1 {
				t.Fatalf("stored registry not loaded: %v", got)
			}
			// ...unless --rdap-bootstrap replaced the dns registry.
			override := &rdap.Registry{Services: [][][]string{{{"example"}, {"https://lab.test/"}}}}
			pinned := New(Config{Store: st, RDAP: &rdap.Client{}, DNSBootstrap: override})
			if err := pinned.LoadBootstrap(ctx); err != nil {
				t.Fatal(err)
			}
			if got := pinned.RDAP.Bootstrap().DomainURLs("nic.example"); len(got) != 1 || got[0] != "https://lab.test/" {
				t.Fatalf("override lost: %v", got)
			}
		})
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"google.com", "WWW.Google.COM.", "bücher.de", "co.uk", "1.2.3.4", "foo.github.io", "a..b", "xn--p1ai.xn--p1ai"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, tld, err := Normalize(s)
		if err != nil {
			return
		}
		if !strings.HasSuffix(d, "."+tld) || strings.ToLower(d) != d || strings.Count(d, ".") < 1 {
			t.Fatalf("Normalize(%q) = %q, %q", s, d, tld)
		}
		if d2, _, err := Normalize(d); err != nil || d2 != d {
			t.Fatalf("Normalize not idempotent: %q -> %q -> %q (%v)", s, d, d2, err)
		}
	})
}
