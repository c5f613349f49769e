package cert

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ctx509 "github.com/google/certificate-transparency-go/x509"
	ctpkix "github.com/google/certificate-transparency-go/x509/pkix"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// collect decodes input and returns what was emitted and rejected.
func collect(t testing.TB, data []byte) ([]Certificate, []Reject) {
	t.Helper()
	var certs []Certificate
	var rejects []Reject
	err := Decode(bytes.NewReader(data), "input", func(c Certificate) error {
		certs = append(certs, c)
		return nil
	}, func(r Reject) { rejects = append(rejects, r) })
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	return certs, rejects
}

func TestParseLetsEncryptLeaf(t *testing.T) {
	data, err := os.ReadFile("testdata/netbox-ssl_letsencrypt_leaf.pem")
	if err != nil {
		t.Fatal(err)
	}
	certs, rejects := collect(t, data)
	if len(rejects) != 0 || len(certs) != 1 {
		t.Fatalf("got %d certs, rejects %v; want 1 cert", len(certs), rejects)
	}
	want := Certificate{
		SHA256:    "56e928422fe3340e3048ee9ce3f4ad086242a13cf88a648831effd1343773973",
		SubjectCN: "letsencrypt.org",
		IssuerCN:  "E7",
		IssuerOrg: "Let's Encrypt",
		Serial:    "58088975b6aea0096e3c8ca4a844700c4a0",
		NotBefore: time.Date(2026, 1, 7, 17, 54, 33, 0, time.UTC),
		NotAfter:  time.Date(2026, 4, 7, 17, 54, 32, 0, time.UTC),
		DNSNames: []string{"cp.letsencrypt.org", "cp.root-x1.letsencrypt.org", "cps.letsencrypt.org",
			"cps.root-x1.letsencrypt.org", "lencr.org", "letsencrypt.com", "letsencrypt.org",
			"www.lencr.org", "www.letsencrypt.com", "www.letsencrypt.org"},
		IPAddresses:        []netip.Addr{},
		SignatureAlgorithm: "ECDSA-SHA384",
	}
	got := certs[0]
	if len(got.SHA1) != 40 {
		t.Errorf("SHA1 = %q, want 40 hex digits", got.SHA1)
	}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Certificate{}, "Raw", "SHA1", "SignatureAlgorithm"), cmpopts.EquateComparable(netip.Addr{})); diff != "" {
		t.Errorf("certificate (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(got.SignatureAlgorithm, "ECDSA") {
		t.Errorf("SignatureAlgorithm = %q, want ECDSA-*", got.SignatureAlgorithm)
	}
}

func TestDecodeTestdata(t *testing.T) {
	tests := []struct {
		file      string
		certs     int
		wantJunk  bool // openssl -text output before the block
		firstName string
	}{
		{"appmattus_bloomberg.pem", 1, false, "wmkt1.cirrus.bloomberg.com"},
		{"appmattus_github-chain.pem", 2, false, "github.com"},
		{"appmattus_google-cert.pem", 1, true, "*.google.com"},
		{"appmattus_no-common-name.pem", 1, false, "no-common-name.badssl.com"},
		{"appmattus_no-sct.badssl.com.pem", 2, false, "no-sct.badssl.com"},
		{"appmattus_no-subject.pem", 1, false, "no-subject.badssl.com"},
		{"netbox-ssl_digicert_chain.pem", 3, false, "digicert.com"},
		{"netbox-ssl_letsencrypt_chain.pem", 2, false, "cp.letsencrypt.org"},
		{"zlint_evWildcard.pem", 1, true, "*.backup.velia.net"},
		{"zlint_facebookOnionV3Address.pem", 1, true, ""},
		{"zlint_sha1WithRSASignatureAlgorithm.pem", 1, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			certs, rejects := collect(t, data)
			if len(certs) != tt.certs {
				t.Fatalf("got %d certificates, want %d (rejects %v)", len(certs), tt.certs, rejects)
			}
			if tt.wantJunk {
				if len(rejects) != 1 || rejects[0].Line != 1 || !strings.Contains(rejects[0].Reason, "openssl text output") {
					t.Errorf("rejects = %v, want one openssl-text reject at line 1", rejects)
				}
			} else if len(rejects) != 0 {
				t.Errorf("rejects = %v, want none", rejects)
			}
			if tt.firstName != "" && (len(certs[0].DNSNames) == 0 || !containsName(certs[0].DNSNames, tt.firstName)) {
				t.Errorf("DNSNames = %v, want to contain %q", certs[0].DNSNames, tt.firstName)
			}
			for _, c := range certs {
				if len(c.SHA256) != 64 || c.Serial == "" || c.NotAfter.Before(c.NotBefore) {
					t.Errorf("implausible certificate %+v", c)
				}
			}
		})
	}
}

func containsName(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

func TestReadDir(t *testing.T) {
	seen := map[string]bool{}
	var rejects []Reject
	n := 0
	err := ReadDir("testdata", func(c Certificate) error {
		n++
		seen[c.SHA256] = true
		return nil
	}, func(r Reject) { rejects = append(rejects, r) })
	if err != nil {
		t.Fatal(err)
	}
	// 10 appmattus/netbox files hold 15 certificates, 13 zlint files one each.
	if n != 28 {
		t.Errorf("read %d certificates, want 28", n)
	}
	if len(seen) >= n || len(seen) < 20 {
		t.Errorf("%d distinct of %d: chains should repeat some intermediates", len(seen), n)
	}
	// 13 zlint and 1 appmattus text prefixes plus README.md (no PEM blocks).
	if len(rejects) != 15 {
		t.Errorf("got %d rejects, want 15: %v", len(rejects), rejects)
	}
	if err := ReadDir("testdata/does-not-exist", func(Certificate) error { return nil }, func(Reject) {}); err == nil {
		t.Error("ReadDir of a missing directory: want error")
	}
}

func TestHostsAndWildcards(t *testing.T) {
	c := Certificate{SubjectCN: "WWW.Example.COM.", DNSNames: []string{"*.example.com", "example.com", "api.example.com"}}
	want := []string{"example.com", "api.example.com", "www.example.com"}
	if diff := cmp.Diff(want, c.Hosts()); diff != "" {
		t.Errorf("Hosts (-want +got):\n%s", diff)
	}
	if got := (Certificate{SubjectCN: "GitHub CA"}).Hosts(); len(got) != 0 {
		t.Errorf("Hosts of a CA name = %v, want none", got)
	}
	if b, w := WildcardBase("*.a.b"); b != "a.b" || !w {
		t.Errorf("WildcardBase = %q, %v", b, w)
	}
}

// newCert creates a self-signed certificate from tmpl with crypto/x509.
func newCert(t testing.TB, tmpl *x509.Certificate) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("CreateCertificate: %v", err)
	}
	return der
}

func template(serial int64) *x509.Certificate {
	return &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "Odd.Example.Org", Organization: []string{"Odd Org"}},
		NotBefore:    time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter:     time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		DNSNames:     []string{"Odd.Example.Org.", "*.Odd.Example.Org", "odd.example.org"},
		IPAddresses:  []net.IP{net.ParseIP("192.0.2.7"), net.ParseIP("2001:db8::1")},
	}
}

// newNegativeSerialCert creates a certificate with serial -42 with the
// certificate-transparency-go fork of x509, since crypto/x509 refuses to.
func newNegativeSerialCert(t testing.TB) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	std := template(-42)
	tmpl := &ctx509.Certificate{
		SerialNumber: std.SerialNumber,
		Subject:      ctpkix.Name{CommonName: std.Subject.CommonName, Organization: std.Subject.Organization},
		NotBefore:    std.NotBefore,
		NotAfter:     std.NotAfter,
		DNSNames:     std.DNSNames,
		IPAddresses:  std.IPAddresses,
	}
	der, err := ctx509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("CreateCertificate: %v", err)
	}
	return der
}

func TestParseNegativeSerial(t *testing.T) {
	der := newNegativeSerialCert(t)
	if _, err := x509.ParseCertificate(der); err == nil {
		t.Fatal("crypto/x509 accepted a negative serial; the fallback is untested")
	}
	c, err := Parse(der)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if c.Serial != "-2a" {
		t.Errorf("Serial = %q, want -2a", c.Serial)
	}
	want := []string{"odd.example.org", "*.odd.example.org"}
	if diff := cmp.Diff(want, c.DNSNames); diff != "" {
		t.Errorf("DNSNames (-want +got):\n%s", diff)
	}
	wantIPs := []netip.Addr{netip.MustParseAddr("192.0.2.7"), netip.MustParseAddr("2001:db8::1")}
	if diff := cmp.Diff(wantIPs, c.IPAddresses, cmpopts.EquateComparable(netip.Addr{})); diff != "" {
		t.Errorf("IPAddresses (-want +got):\n%s", diff)
	}
	if c.SubjectOrg != "Odd Org" || c.IssuerCN != "Odd.Example.Org" || c.IsPrecert {
		t.Errorf("unexpected fields: %+v", c)
	}
}

func TestParsePrecertPoison(t *testing.T) {
	tmpl := template(7)
	tmpl.ExtraExtensions = []pkix.Extension{{Id: oidCTPoison, Critical: true, Value: []byte{0x05, 0x00}}}
	c, err := Parse(newCert(t, tmpl))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !c.IsPrecert || c.Serial != "7" {
		t.Errorf("IsPrecert = %v, Serial = %q; want true, 7", c.IsPrecert, c.Serial)
	}
}

func TestParseRejects(t *testing.T) {
	for name, der := range map[string][]byte{
		"empty":     nil,
		"not asn1":  []byte("hello"),
		"truncated": newCert(t, template(1))[:100],
	} {
		if _, err := Parse(der); err == nil {
			t.Errorf("%s: Parse succeeded, want error", name)
		}
	}
}

func TestDecodeHostilePEM(t *testing.T) {
	good := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: newCert(t, template(1))})
	var b bytes.Buffer
	b.WriteString("some notes\nmore notes\n") // 1-2 junk
	b.Write(good)                             // 3-..
	b.WriteString("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")
	b.WriteString("-----BEGIN CERTIFICATE-----\n!!!notbase64\n-----END CERTIFICATE-----\n")
	b.WriteString("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
	b.WriteString("-----BEGIN CERTIFICATE-----\nAAAA\n-----END X509 CRL-----\n")
	b.WriteString(strings.Repeat("x", lineBufferSize+10) + "\n")
	b.Write(bytes.ReplaceAll(good, []byte("\n"), []byte("\r\n")))
	b.WriteString("-----BEGIN CERTIFICATE-----\nAAAA\n")
	certs, rejects := collect(t, b.Bytes())
	if len(certs) != 2 {
		t.Errorf("got %d certificates, want 2", len(certs))
	}
	wantReasons := []string{
		"skipped 2 lines of text that is not PEM",
		`PEM block "PRIVATE KEY" is not a certificate`,
		"bad base64",
		"parse certificate",
		`ends with END "X509 CRL"`,
		"skipped 1 lines of text that is not PEM",
		"has no END line",
	}
	if len(rejects) != len(wantReasons) {
		t.Fatalf("got %d rejects, want %d: %v", len(rejects), len(wantReasons), rejects)
	}
	for i, want := range wantReasons {
		if !strings.Contains(rejects[i].Reason, want) {
			t.Errorf("reject %d = %q, want it to contain %q", i, rejects[i], want)
		}
	}
	if rejects[0].Line != 1 || rejects[1].Line == 0 {
		t.Errorf("reject lines = %d, %d", rejects[0].Line, rejects[1].Line)
	}
}

func TestDecodeDER(t *testing.T) {
	a, b := newCert(t, template(1)), newCert(t, template(2))
	data := append(append(append([]byte{}, a...), b...), 0x30, 0x82, 0xff)
	certs, rejects := collect(t, data)
	if len(certs) != 2 || certs[1].Serial != "2" {
		t.Errorf("got %d certificates, want 2", len(certs))
	}
	if len(rejects) != 1 || rejects[0].Offset != int64(len(a)+len(b)) {
		t.Errorf("rejects = %v, want one at offset %d", rejects, len(a)+len(b))
	}
}

func TestDecodeEmitError(t *testing.T) {
	data, _ := os.ReadFile("testdata/appmattus_github-chain.pem")
	stop := os.ErrClosed
	err := Decode(bytes.NewReader(data), "x", func(Certificate) error { return stop }, func(Reject) {})
	if err != stop {
		t.Errorf("Decode error = %v, want the emit error", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"appmattus_github-chain.pem", "zlint_evWildcard.pem"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		if blk, _ := pem.Decode(data); blk != nil {
			f.Add(blk.Bytes)
		}
	}
	f.Add([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Decode(bytes.NewReader(data), "fuzz", func(c Certificate) error {
			if len(c.SHA256) != 64 {
				t.Fatalf("bad SHA256 %q", c.SHA256)
			}
			return nil
		}, func(Reject) {})
	})
}

func BenchmarkDecodeChain(b *testing.B) {
	data, err := os.ReadFile("testdata/netbox-ssl_digicert_chain.pem")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	n := 0
	for b.Loop() {
		_ = Decode(bytes.NewReader(data), "bench", func(Certificate) error { n++; return nil }, func(Reject) {})
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "certs/s")
}
