package ct

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ctgo "github.com/google/certificate-transparency-go"
	"github.com/google/go-cmp/cmp"

	"github.com/periscope-oss/periscope/internal/cert"
	"github.com/periscope-oss/periscope/internal/ct/cttest"
)

// chain is one real certificate chain from testdata: leaf first.
type chain [][]byte

func loadChains(t testing.TB) []chain {
	t.Helper()
	files, err := filepath.Glob("testdata/*.pem")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	var out []chain
	for _, f := range files {
		var c chain
		err := cert.ReadFile(f, func(x cert.Certificate) error {
			c = append(c, x.Raw)
			return nil
		}, func(r cert.Reject) { t.Errorf("testdata reject: %v", r) })
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// newPrecert makes a CA and a pre-certificate (poison extension) it issued.
func newPrecert(t testing.TB) (precert, issuer []byte) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Test CT CA", Organization: []string{"Periscope Test"}},
		NotBefore: time.Unix(1700000000, 0), NotAfter: time.Unix(1900000000, 0),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	issuer, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(issuer)
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(99), Subject: pkix.Name{CommonName: "pre.example.com"},
		NotBefore: time.Unix(1700000000, 0), NotAfter: time.Unix(1800000000, 0),
		DNSNames:        []string{"pre.example.com", "*.pre.example.com"},
		ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 11129, 2, 4, 3}, Critical: true, Value: []byte{5, 0}}},
	}
	precert, err = x509.CreateCertificate(rand.Reader, leaf, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return precert, issuer
}

func sha(der []byte) string {
	s := sha256.Sum256(der)
	return hex.EncodeToString(s[:])
}

// fastClient returns a client whose retry waits are recorded, not slept.
func fastClient(t testing.TB, log *cttest.Log, opts Options) (*Client, *[]time.Duration) {
	t.Helper()
	c, err := NewClient(log.URL(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return ctx.Err()
	}
	return c, &waits
}

// buildLog logs every testdata chain's leaf with its chain, one precert and
// one undecodable entry. It returns the SHA-256 expected at each index
// ("" for the bad entry).
func buildLog(t testing.TB) (*cttest.Log, []string) {
	t.Helper()
	log := cttest.New()
	t.Cleanup(log.Close)
	var want []string
	for _, c := range loadChains(t) {
		if err := log.AddCert(c[0], c[1:]...); err != nil {
			t.Fatal(err)
		}
		want = append(want, sha(c[0]))
	}
	pre, issuer := newPrecert(t)
	if err := log.AddPrecert(pre, issuer); err != nil {
		t.Fatal(err)
	}
	want = append(want, sha(pre))
	log.AddRaw([]byte{0, 0, 1, 2, 3}, nil)
	want = append(want, "")
	for _, c := range loadChains(t)[:2] {
		if err := log.AddCert(c[0], c[1:]...); err != nil {
			t.Fatal(err)
		}
		want = append(want, sha(c[0]))
	}
	return log, want
}

func TestFollowerReadsRealLog(t *testing.T) {
	log, want := buildLog(t)
	client, waits := fastClient(t, log, Options{BatchSize: 3, PublicKey: log.PublicKey()})
	sth, err := client.GetSTH(context.Background())
	if err != nil {
		t.Fatalf("GetSTH: %v", err)
	}
	if sth.TreeSize != int64(len(want)) || len(sth.RootHash) != 32 {
		t.Fatalf("STH = %+v, want size %d", sth, len(want))
	}
	var cp MemoryCheckpoint
	var got []string
	var precert Entry
	chained := 0
	f := &Follower{Client: client, Log: "test"}
	err = f.Run(context.Background(), &cp, func(e Entry) error {
		if e.Index != int64(len(got)) {
			t.Errorf("entry index %d, want %d", e.Index, len(got))
		}
		if e.Err != nil {
			got = append(got, "")
			return nil
		}
		if e.Cert.IsPrecert {
			precert = e
		}
		if e.Timestamp.IsZero() {
			t.Errorf("entry %d: no timestamp", e.Index)
		}
		chained += len(e.Chain)
		got = append(got, e.Cert.SHA256)
		return nil
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SHA-256 per index (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"pre.example.com", "*.pre.example.com"}, precert.Cert.DNSNames); diff != "" {
		t.Errorf("precert names (-want +got):\n%s", diff)
	}
	if precert.Cert.IssuerCN != "Test CT CA" {
		t.Errorf("precert issuer = %q", precert.Cert.IssuerCN)
	}
	if chained < 6 {
		t.Errorf("only %d chain certificates decoded", chained)
	}
	if next, _ := cp.Load("test"); next != int64(len(want)) {
		t.Errorf("checkpoint = %d, want %d", next, len(want))
	}
	if len(*waits) != 0 {
		t.Errorf("retries on a healthy log: %v", *waits)
	}
}

func TestFollowerResumesFromCheckpoint(t *testing.T) {
	log, want := buildLog(t)
	client, _ := fastClient(t, log, Options{BatchSize: 3})
	var cp MemoryCheckpoint
	f := &Follower{Client: client}
	stop := errors.New("stop")
	var first []int64
	err := f.Run(context.Background(), &cp, func(e Entry) error {
		if e.Index == 4 {
			return stop
		}
		first = append(first, e.Index)
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Run error = %v, want stop", err)
	}
	next, _ := cp.Load(log.URL())
	if next != 3 {
		t.Fatalf("checkpoint after failure in batch 3..5 = %d, want 3", next)
	}
	var second []int64
	if err := f.Run(context.Background(), &cp, func(e Entry) error {
		second = append(second, e.Index)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if second[0] != 3 || second[len(second)-1] != int64(len(want)-1) || len(second) != len(want)-3 {
		t.Errorf("second run read %v, want 3..%d", second, len(want)-1)
	}
	// Nothing new: a third run reads nothing.
	n := 0
	if err := f.Run(context.Background(), &cp, func(Entry) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("third run: %d entries, err %v", n, err)
	}
}

func TestFollowerPollsUntilCancelled(t *testing.T) {
	log, want := buildLog(t)
	client, _ := fastClient(t, log, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	polls := 0
	client.sleep = func(ctx context.Context, d time.Duration) error {
		polls++
		if polls == 2 {
			cancel()
		}
		return ctx.Err()
	}
	n := 0
	err := (&Follower{Client: client, Poll: time.Second}).Run(ctx, &MemoryCheckpoint{}, func(Entry) error { n++; return nil })
	if !errors.Is(err, context.Canceled) || n != len(want) {
		t.Errorf("Run = %v after %d entries; want context.Canceled after %d", err, n, len(want))
	}
}

func TestShortBatches(t *testing.T) {
	log, want := buildLog(t)
	log.SetMaxBatch(2)
	client, _ := fastClient(t, log, Options{BatchSize: 5})
	var got []int64
	if err := client.GetEntries(context.Background(), 1, int64(len(want)-1), func(e Entry) error {
		got = append(got, e.Index)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, idx := range got {
		if idx != int64(i+1) {
			t.Fatalf("indexes %v, want 1..%d in order", got, len(want)-1)
		}
	}
	if len(got) != len(want)-1 {
		t.Errorf("got %d entries, want %d", len(got), len(want)-1)
	}
	if n, min := log.Requests("get-entries"), (len(want)-1+1)/2; n < min {
		t.Errorf("%d requests, want at least %d", n, min)
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	log, _ := buildLog(t)
	client, waits := fastClient(t, log, Options{MinBackoff: 100 * time.Millisecond, MaxBackoff: time.Second})
	log.Fail(
		cttest.Fault{Status: 500, Body: "boom"},
		cttest.Fault{Status: 429, RetryAfter: "7"},
		cttest.Fault{Status: 503, RetryAfter: "3"},
		cttest.Fault{Status: 200, Body: `{"entries":[]}`}, // empty batch
	)
	entries, err := client.Batch(context.Background(), 0, 4)
	if err != nil {
		t.Fatalf("Batch: %v", err)
	}
	if len(entries) != 5 {
		t.Errorf("got %d entries, want 5", len(entries))
	}
	w := *waits
	if len(w) != 4 {
		t.Fatalf("waits = %v, want 4", w)
	}
	if w[0] < 100*time.Millisecond || w[0] > 120*time.Millisecond || w[1] != 7*time.Second || w[2] != 3*time.Second {
		t.Errorf("waits = %v, want ~100ms, 7s, 3s, backoff", w)
	}
}

func TestErrors(t *testing.T) {
	log, _ := buildLog(t)
	ctx := context.Background()
	t.Run("gives up after MaxRetries", func(t *testing.T) {
		client, waits := fastClient(t, log, Options{MaxRetries: 2})
		log.Fail(cttest.Fault{Status: 500}, cttest.Fault{Status: 500}, cttest.Fault{Status: 500})
		_, err := client.GetSTH(ctx)
		var he *HTTPError
		if !errors.As(err, &he) || he.StatusCode != 500 || !strings.Contains(err.Error(), "after 3 attempts") {
			t.Errorf("err = %v, want a 500 after 3 attempts", err)
		}
		if len(*waits) != 2 {
			t.Errorf("waits = %v, want 2", *waits)
		}
	})
	t.Run("4xx is not retried", func(t *testing.T) {
		client, waits := fastClient(t, log, Options{})
		_, err := client.Batch(ctx, 1000, 1001) // beyond the tree: 400
		var he *HTTPError
		if !errors.As(err, &he) || he.StatusCode != 400 || len(*waits) != 0 {
			t.Errorf("err = %v, waits %v; want one 400", err, *waits)
		}
	})
	t.Run("wrong key", func(t *testing.T) {
		other := cttest.New()
		defer other.Close()
		client, _ := fastClient(t, log, Options{PublicKey: other.PublicKey()})
		if _, err := client.GetSTH(ctx); err == nil || !strings.Contains(err.Error(), "signature") {
			t.Errorf("err = %v, want a signature error", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		client, _ := fastClient(t, log, Options{})
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := client.GetSTH(cctx); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("bad URL", func(t *testing.T) {
		for _, u := range []string{"", "ftp://x", "/relative", "http://"} {
			if _, err := NewClient(u, Options{}); err == nil {
				t.Errorf("NewClient(%q) succeeded", u)
			}
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"5", 5 * time.Second},
		{" 120 ", 2 * time.Minute},
		{"-3", 0},
		{"soon", 0},
		{"Wed, 01 Jan 2025 00:00:30 GMT", 30 * time.Second},
		{"Tue, 31 Dec 2024 00:00:30 GMT", 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func FuzzDecodeLeaf(f *testing.F) {
	log, _ := buildLog(f)
	client, _ := fastClient(f, log, Options{})
	var resp ctgo.GetEntriesResponse
	q := url.Values{"start": {"0"}, "end": {strconv.Itoa(log.Size() - 1)}}
	if err := client.get(context.Background(), "get-entries", q, &resp); err != nil {
		f.Fatal(err)
	}
	for _, le := range resp.Entries {
		f.Add(le.LeafInput, le.ExtraData)
	}
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, []byte{})
	f.Fuzz(func(t *testing.T, leaf, extra []byte) {
		e := decodeLeaf(3, &ctgo.LeafEntry{LeafInput: leaf, ExtraData: extra})
		if e.Err == nil && len(e.Cert.SHA256) != 64 {
			t.Fatalf("decoded entry without a certificate: %+v", e)
		}
	})
}

// Issue 12, defect 11: a log that redirects to another host is not followed.
func TestRefusesCrossHostRedirect(t *testing.T) {
	log, _ := buildLog(t)
	asked := 0
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked++
		http.Redirect(w, r, log.URL()+r.URL.Path, http.StatusFound)
	}))
	defer elsewhere.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusFound)
	}))
	defer redirecting.Close()
	c, err := NewClient(redirecting.URL+"/", Options{PublicKey: log.PublicKey(), MaxRetries: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.sleep = func(ctx context.Context, d time.Duration) error { return nil }
	if _, err := c.GetSTH(context.Background()); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("err = %v, want the redirect refused", err)
	}
	if asked != 0 {
		t.Errorf("the other host was asked %d times", asked)
	}
}
