// Package cttest runs an in-memory RFC 6962 log over httptest for tests: it
// builds real MerkleTreeLeaf/TimestampedEntry encodings from certificate DER,
// serves get-sth (with a real Merkle root and an ECDSA signature) and
// get-entries, and can inject failures (500, 429 with Retry-After) and short
// batches.
package cttest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"

	ctgo "github.com/google/certificate-transparency-go"
	"github.com/google/certificate-transparency-go/tls"
	ctx509 "github.com/google/certificate-transparency-go/x509"
)

// Fault is an injected failure answered instead of a request.
type Fault struct {
	Status     int
	RetryAfter string // Retry-After header value, if any
	Body       string
}

// Log is a test CT log. Its methods are safe for concurrent use.
type Log struct {
	srv *httptest.Server
	key *ecdsa.PrivateKey

	mu       sync.Mutex
	entries  []ctgo.LeafEntry
	hashes   [][sha256.Size]byte
	maxBatch int
	faults   []Fault
	requests map[string]int
	// now stamps new entries and tree heads.
	now func() time.Time
}

// New starts a log with no entries. Close it when done.
func New() *Log {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(fmt.Sprintf("cttest: generate key: %v", err))
	}
	l := &Log{key: key, maxBatch: 1000, requests: map[string]int{}, now: time.Now}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ct/v1/get-sth", l.getSTH)
	mux.HandleFunc("GET /ct/v1/get-entries", l.getEntries)
	l.srv = httptest.NewServer(l.count(mux))
	return l
}

// URL is the log's base URL.
func (l *Log) URL() string { return l.srv.URL }

// Close stops the server.
func (l *Log) Close() { l.srv.Close() }

// PublicKey is the key that signs tree heads.
func (l *Log) PublicKey() crypto.PublicKey { return &l.key.PublicKey }

// SetMaxBatch caps the entries one get-entries answer holds (default 1000),
// as real logs do.
func (l *Log) SetMaxBatch(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.maxBatch = n
}

// Fail queues faults: the next len(f) requests are answered with them.
func (l *Log) Fail(f ...Fault) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.faults = append(l.faults, f...)
}

// Requests returns how many requests the named method (such as
// "get-entries") has received, faults included.
func (l *Log) Requests(method string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.requests[method]
}

// Size returns the number of entries.
func (l *Log) Size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// AddCert appends an x509_entry for der with the given issuing chain.
func (l *Log) AddCert(der []byte, chain ...[]byte) error {
	leaf := ctgo.CreateX509MerkleTreeLeaf(ctgo.ASN1Cert{Data: der}, uint64(l.now().UnixMilli()))
	extra, err := tls.Marshal(ctgo.CertificateChain{Entries: asn1Certs(chain)})
	if err != nil {
		return fmt.Errorf("cttest: encode chain: %w", err)
	}
	return l.add(leaf, extra)
}

// AddPrecert appends a precert_entry for the pre-certificate precertDER
// (which carries the poison extension) issued by issuerDER: the leaf holds
// the TBSCertificate with the poison removed and the issuer key hash, and
// extra_data the pre-certificate and chain, as RFC 6962 §3.1 describes.
func (l *Log) AddPrecert(precertDER, issuerDER []byte, chain ...[]byte) error {
	pre, err := ctx509.ParseCertificate(precertDER)
	if pre == nil {
		return fmt.Errorf("cttest: parse precertificate: %w", err)
	}
	issuer, err := ctx509.ParseCertificate(issuerDER)
	if issuer == nil {
		return fmt.Errorf("cttest: parse issuer: %w", err)
	}
	tbs, err := ctx509.BuildPrecertTBS(pre.RawTBSCertificate, nil)
	if err != nil {
		return fmt.Errorf("cttest: build precert TBS: %w", err)
	}
	leaf := &ctgo.MerkleTreeLeaf{
		Version:  ctgo.V1,
		LeafType: ctgo.TimestampedEntryLeafType,
		TimestampedEntry: &ctgo.TimestampedEntry{
			Timestamp: uint64(l.now().UnixMilli()),
			EntryType: ctgo.PrecertLogEntryType,
			PrecertEntry: &ctgo.PreCert{
				IssuerKeyHash:  sha256.Sum256(issuer.RawSubjectPublicKeyInfo),
				TBSCertificate: tbs,
			},
		},
	}
	extra, err := tls.Marshal(ctgo.PrecertChainEntry{
		PreCertificate:   ctgo.ASN1Cert{Data: precertDER},
		CertificateChain: asn1Certs(append([][]byte{issuerDER}, chain...)),
	})
	if err != nil {
		return fmt.Errorf("cttest: encode precert chain: %w", err)
	}
	return l.add(leaf, extra)
}

// AddRaw appends an entry with arbitrary leaf_input and extra_data bytes,
// for testing how clients handle undecodable entries.
func (l *Log) AddRaw(leafInput, extraData []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = append(l.entries, ctgo.LeafEntry{LeafInput: leafInput, ExtraData: extraData})
	l.hashes = append(l.hashes, leafHash(leafInput))
}

func (l *Log) add(leaf *ctgo.MerkleTreeLeaf, extra []byte) error {
	input, err := tls.Marshal(*leaf)
	if err != nil {
		return fmt.Errorf("cttest: encode leaf: %w", err)
	}
	l.AddRaw(input, extra)
	return nil
}

func asn1Certs(ders [][]byte) []ctgo.ASN1Cert {
	out := make([]ctgo.ASN1Cert, len(ders))
	for i, d := range ders {
		out[i] = ctgo.ASN1Cert{Data: d}
	}
	return out
}

func leafHash(input []byte) [sha256.Size]byte {
	return sha256.Sum256(append([]byte{ctgo.TreeLeafPrefix}, input...))
}

// rootHash is the RFC 6962 §2.1 Merkle Tree Hash of leaf hashes.
func rootHash(h [][sha256.Size]byte) [sha256.Size]byte {
	switch len(h) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return h[0]
	}
	k := 1
	for k<<1 < len(h) {
		k <<= 1
	}
	left, right := rootHash(h[:k]), rootHash(h[k:])
	return sha256.Sum256(append(append([]byte{ctgo.TreeNodePrefix}, left[:]...), right[:]...))
}

// count tallies requests and answers queued faults.
func (l *Log) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.URL.Path[len("/ct/v1/"):]
		l.mu.Lock()
		l.requests[method]++
		var f *Fault
		if len(l.faults) > 0 {
			f = &l.faults[0]
			l.faults = l.faults[1:]
		}
		l.mu.Unlock()
		if f != nil {
			if f.RetryAfter != "" {
				w.Header().Set("Retry-After", f.RetryAfter)
			}
			http.Error(w, f.Body, f.Status)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (l *Log) getSTH(w http.ResponseWriter, _ *http.Request) {
	l.mu.Lock()
	sth := ctgo.SignedTreeHead{
		Version:        ctgo.V1,
		TreeSize:       uint64(len(l.entries)),
		Timestamp:      uint64(l.now().UnixMilli()),
		SHA256RootHash: rootHash(l.hashes),
	}
	l.mu.Unlock()
	input, err := ctgo.SerializeSTHSignatureInput(sth)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	sig, err := tls.CreateSignature(*l.key, tls.SHA256, input)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	sigBytes, err := tls.Marshal(sig)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, ctgo.GetSTHResponse{
		TreeSize:          sth.TreeSize,
		Timestamp:         sth.Timestamp,
		SHA256RootHash:    sth.SHA256RootHash[:],
		TreeHeadSignature: sigBytes,
	})
}

func (l *Log) getEntries(w http.ResponseWriter, r *http.Request) {
	start, err1 := strconv.ParseInt(r.URL.Query().Get("start"), 10, 64)
	end, err2 := strconv.ParseInt(r.URL.Query().Get("end"), 10, 64)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err1 != nil || err2 != nil || start < 0 || end < start || start >= int64(len(l.entries)) {
		http.Error(w, `{"error":"bad start/end"}`, http.StatusBadRequest)
		return
	}
	end = min(end, int64(len(l.entries))-1, start+int64(l.maxBatch)-1)
	writeJSON(w, ctgo.GetEntriesResponse{Entries: l.entries[start : end+1]})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
