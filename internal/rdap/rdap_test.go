package rdap

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/periscope-oss/periscope/internal/egress"
)

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestBundledBootstrap(t *testing.T) {
	b := Bundled()
	for domain, want := range map[string]string{
		"google.com": "https://rdap.verisign.com/com/v1/",
		"example.cz": "https://rdap.nic.cz/",
		"a.b.co.uk":  "",
	} {
		got := b.DomainURLs(domain)
		if want == "" {
			continue
		}
		if len(got) == 0 || got[0] != want {
			t.Errorf("DomainURLs(%s) = %v, want %s first", domain, got, want)
		}
	}
	if got := b.IPURLs(netip.MustParseAddr("1.1.1.1")); len(got) == 0 || !strings.Contains(got[0], "apnic") || !strings.HasPrefix(got[0], "https://") {
		t.Errorf("IPURLs(1.1.1.1) = %v", got)
	}
	if got := b.IPURLs(netip.MustParseAddr("2001:4860::1")); len(got) == 0 || !strings.Contains(got[0], "arin") {
		t.Errorf("IPURLs(2001:4860::1) = %v", got)
	}
	if got := b.ASNURLs(13335); len(got) == 0 || !strings.Contains(got[0], "arin") {
		t.Errorf("ASNURLs(13335) = %v", got)
	}
	if _, err := ParseRegistry([]byte(`{"services":[]}`)); err == nil {
		t.Error("empty registry accepted")
	}
}

func TestSummarizeCorpus(t *testing.T) {
	obj, err := Decode(read(t, "whoisit_rdap.verisign.com_domain_GOOGLE.COM.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize("https://rdap.verisign.com/com/v1/domain/GOOGLE.COM", obj, nil)
	if s.Registrar != "MarkMonitor Inc." || s.IANAID != "292" || s.DNSSEC != "signed" {
		t.Errorf("registrar %q id %q dnssec %q", s.Registrar, s.IANAID, s.DNSSEC)
	}
	if got := strings.Join(s.Nameservers, ","); got != "ns1.google.com,ns2.google.com,ns3.google.com,ns4.google.com" {
		t.Errorf("nameservers %s", got)
	}
	if s.CreatedAt.Format(time.RFC3339) != "1997-09-15T04:00:00Z" || s.ExpiresAt.Format(time.RFC3339) != "2028-09-14T04:00:00Z" {
		t.Errorf("dates %v %v", s.CreatedAt, s.ExpiresAt)
	}
	if obj.RelatedURL() != "https://rdap.markmonitor.com/rdap/domain/GOOGLE.COM" {
		t.Errorf("related %q", obj.RelatedURL())
	}
	for _, f := range []string{"whoisit_rdap.verisign.com_domain_THEMARQUETRY.COM.json", "20c_rdap.verisign.com_domain_20c.com.json", "openrdap_rdap.nic.cz_domain_example.cz.json"} {
		o, err := Decode(read(t, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		s := Summarize(f, o, nil)
		if len(s.Nameservers) == 0 || s.CreatedAt.IsZero() {
			t.Errorf("%s: nameservers %v created %v", f, s.Nameservers, s.CreatedAt)
		}
	}
	cz, _ := Decode(read(t, "openrdap_rdap.nic.cz_domain_example.cz.json"))
	if s := Summarize("", cz, nil); s.Registrant == nil || s.Registrant.Handle != "SB:EXAMPLE" {
		t.Errorf("example.cz registrant %+v", s.Registrant)
	}
	if _, err := Decode([]byte(`{"foo":1}`)); err == nil {
		t.Error("non-RDAP JSON accepted")
	}
}

// registries serves the recorded Verisign answer with its related link
// pointed at a second server playing the registrar.
func registries(t *testing.T, relatedHost string) (registry, registrar *httptest.Server) {
	registrar = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/rdap+json")
		w.Write(read(t, "openrdap_rdap.nic.cz_domain_example.cz.json"))
	}))
	t.Cleanup(registrar.Close)
	if relatedHost == "" {
		relatedHost = strings.TrimPrefix(registrar.URL, "http://")
	}
	body := strings.ReplaceAll(string(read(t, "whoisit_rdap.verisign.com_domain_GOOGLE.COM.json")),
		"https://rdap.markmonitor.com/rdap", "http://"+relatedHost)
	registry = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/com/v1/domain/google.com":
			w.Header().Set("Content-Type", "application/rdap+json")
			w.Write([]byte(body))
		case "/com/v1/domain/busy.com":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(registry.Close)
	return registry, registrar
}

func bootstrapFor(base string) func() *Bootstrap {
	b := Bundled()
	b.DNS = &Registry{Services: [][][]string{{{"com"}, {base + "/com/v1/"}}}}
	return func() *Bootstrap { return b }
}

func TestClientFollowsRelated(t *testing.T) {
	registry, _ := registries(t, "")
	c := &Client{HTTP: egress.New(egress.Options{AllowPrivate: true}).HTTPClient(5 * time.Second), Bootstrap: bootstrapFor(registry.URL)}
	ans, err := c.Domain(context.Background(), "google.com")
	if err != nil {
		t.Fatal(err)
	}
	if ans.Registrar == nil || ans.RelatedErr != nil {
		t.Fatalf("related not followed: %v", ans.RelatedErr)
	}
	s := Summarize(ans.URL, ans.Object, ans.Registrar)
	if s.Registrant == nil || s.Registrar != "MarkMonitor Inc." {
		t.Fatalf("merge: registrar %q registrant %+v", s.Registrar, s.Registrant)
	}
	if _, err := c.Domain(context.Background(), "nosuchname.com"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("404: err = %v, want ErrNotFound", err)
	}
	var lim *LimitedError
	if _, err := c.Domain(context.Background(), "busy.com"); !errors.As(err, &lim) || lim.RetryAfter != 7*time.Second {
		t.Fatalf("429: err = %v", err)
	}
}

func TestClientRefusesPrivateTargets(t *testing.T) {
	// A bootstrap URL leading to loopback is refused without AllowPrivate.
	registry, _ := registries(t, "")
	strict := &Client{HTTP: egress.New(egress.Options{Ports: []int{443, 80}}).HTTPClient(2 * time.Second), Bootstrap: bootstrapFor(registry.URL)}
	if _, err := strict.Domain(context.Background(), "google.com"); !errors.Is(err, egress.ErrRefused) {
		t.Fatalf("bootstrap to loopback: err = %v, want refused", err)
	}
	// A related link leading to 10.0.0.1 or 169.254.169.254 is refused even
	// though the registry itself is reached.
	for _, target := range []string{"10.0.0.1", "169.254.169.254", "127.0.0.1"} {
		registry, _ := registries(t, target)
		lab := egress.New(egress.Options{AllowPrivate: true}).HTTPClient(2 * time.Second)
		strictHTTP := egress.New(egress.Options{Ports: []int{80, 443}}).HTTPClient(2 * time.Second)
		regHost := strings.TrimPrefix(registry.URL, "http://")
		c := &Client{HTTP: &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
			if r.URL.Host == regHost {
				return lab.Transport.RoundTrip(r)
			}
			return strictHTTP.Transport.RoundTrip(r)
		})}, Bootstrap: bootstrapFor(registry.URL)}
		ans, err := c.Domain(context.Background(), "google.com")
		if err != nil {
			t.Fatal(err)
		}
		if !errors.Is(ans.RelatedErr, egress.ErrRefused) {
			t.Fatalf("related link to %s: err = %v, want refused", target, ans.RelatedErr)
		}
	}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func FuzzDecode(f *testing.F) {
	for _, n := range []string{"whoisit_rdap.verisign.com_domain_GOOGLE.COM.json", "openrdap_rdap.nic.cz_domain_example.cz.json"} {
		f.Add(read(f, n))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := Decode(b)
		if err != nil {
			return
		}
		Summarize("x", o, o)
		_ = o.RelatedURL()
	})
}

// TestDecodeErrors checks that an answer that does not fit the model is
// an error naming the field and what it holds, never the decoder's Go
// types, and that an error answer says so with its code (APNIC writes the
// code as a string).
func TestDecodeErrors(t *testing.T) {
	apnic, err := os.ReadFile("testdata/20c_apnic_error_HH11825JP.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, body, want string
	}{
		{"apnic error", string(apnic), "rdap: an error answer (errorCode 400 Bad Request), not an object"},
		{"events not a list", `{"objectClassName":"domain","ldhName":"a.com","events":{"eventAction":"registration"}}`,
			"rdap: field events: an object where a list belongs (line 1, column 57)"},
		{"nested", `{"objectClassName":"domain","entities":[{"roles":"registrar"}]}`,
			"rdap: field entities.roles: a string where a list belongs"},
		{"no object", `{"rdapConformance":["rdap_level_0"]}`, "rdap: not an RDAP object"},
	} {
		_, err := Decode([]byte(tc.body))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "rdap.")) {
			t.Errorf("%s: Go names in %q", tc.name, err)
		}
	}
}
