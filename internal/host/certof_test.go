package host

import "testing"

// TestMergeKeepsLaterCertificate checks that of two certificates the one
// issued later stands, whichever observation comes last: an old
// certificate read from a file after a scan saw its renewal does not
// replace it.
func TestMergeKeepsLaterCertificate(t *testing.T) {
	renewed := Host{Host: "www.example.com", Cert: Cert{SHA256Fingerprint: "bb", NotBefore: 2000, DNSNames: []string{"www.example.com"}}}
	old := Host{Host: "www.example.com", Cert: Cert{SHA256Fingerprint: "aa", NotBefore: 1000, DNSNames: []string{"example.com"}}}
	if got := Merge(renewed, old).Cert.SHA256Fingerprint; got != "bb" {
		t.Errorf("older certificate observed later: kept %q, want bb", got)
	}
	if got := Merge(old, renewed).Cert.SHA256Fingerprint; got != "bb" {
		t.Errorf("renewal observed later: kept %q, want bb", got)
	}
	same := Host{Host: "www.example.com", Cert: Cert{SHA256Fingerprint: "cc", NotBefore: 2000}}
	if got := Merge(renewed, same).Cert.SHA256Fingerprint; got != "cc" {
		t.Errorf("same issue time: kept %q, want the newer observation's cc", got)
	}
}
