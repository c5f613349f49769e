package hoststore

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/periscope-oss/periscope/internal/host"
)

func TestHostDocRoundTrip(t *testing.T) {
	h := host.Host{Host: "www.example.com", Domain: "example.com", TLD: "com", Subdomain: "www", IPAddress: "192.0.2.1",
		NetworkServices: []host.Service{{Port: 443, Protocol: "tcp", Product: "nginx"}}, HTTPTitle: "Welcome ✓"}
	doc, err := encodeHostDoc(h)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := json.Marshal(h)
	if len(doc) >= len(plain) || doc[0] == '{' {
		t.Fatalf("stored document is %d bytes, the JSON %d", len(doc), len(plain))
	}
	var got host.Host
	if err := decodeHostDoc(doc, &got); err != nil {
		t.Fatal(err)
	}
	want := h
	want.Derive()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	// The same host encodes to the same bytes: "unchanged" is a byte compare.
	if again, _ := encodeHostDoc(h); string(again) != string(doc) {
		t.Fatal("encoding is not deterministic")
	}
	// Plain JSON documents are read as they are.
	var fromPlain host.Host
	if err := decodeHostDoc(plain, &fromPlain); err != nil || fromPlain.Host != h.Host {
		t.Fatalf("plain JSON: %v %+v", err, fromPlain)
	}
	// DEFLATE documents of older stores are read too.
	var old bytes.Buffer
	w, _ := flate.NewWriter(&old, flate.BestSpeed)
	w.Write(plain)
	w.Close()
	var fromFlate host.Host
	if err := decodeHostDoc(old.Bytes(), &fromFlate); err != nil || fromFlate.Host != h.Host || isCurrentDoc(old.Bytes()) {
		t.Fatalf("deflate document: %v %+v", err, fromFlate)
	}
	// A corrupt document is an error, not a panic or a zero host.
	for _, bad := range [][]byte{doc[:len(doc)/2], {0xff, 0x00, 0x12}, {}} {
		var h host.Host
		if err := decodeHostDoc(bad, &h); err == nil {
			t.Errorf("corrupt document %x decoded", bad)
		}
	}
}

func FuzzDecodeHostDoc(f *testing.F) {
	doc, _ := encodeHostDoc(host.Host{Host: "a.example.com"})
	f.Add(doc)
	f.Add([]byte(`{"host":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h host.Host
		decodeHostDoc(b, &h)
	})
}
