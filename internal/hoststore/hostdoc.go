package hoststore

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/periscope-oss/periscope/internal/host"
)

// Host documents are stored as the host object's canonical JSON, compressed
// with S2 (a Snappy successor) against a dictionary of the object's keys: a
// 1.5 KB document shrinks to about 550 bytes, in about 3 µs each way.
// The stored form starts with docS2Dict; older stores hold plain JSON
// (starting with '{') or DEFLATE streams (anything else; a DEFLATE stream
// never starts with 0xFF, whose block type is the reserved one), and both
// are still read.
const docS2Dict = 0xFF

// docDictVersion follows docS2Dict: the dictionary the document was
// compressed with. docDict must never change once written; a new
// dictionary gets a new version and the old stays readable.
const docDictVersion = 1

// docDictText is the dictionary of version 1: the keys of a host object in
// the order its JSON encoding writes them, with one service and one
// certificate. It is data, not code: changing a byte makes stored documents
// unreadable.
const docDictText = `{"host":"","domain":"","tld":"","subdomain":"","is_live":false,"is_resolvable":false,` +
	`"is_cloud":false,"is_cdn":false,"is_cloudflare":false,"has_ipv6":false,"has_private_ip":false,"cdn":"",` +
	`"cloud":{"provider":"","region":""},"dns":{"a":[],"aaaa":[],"cname":[],"mx":[],"ns":[],"ptr":[],"txt":[]},` +
	`"http_status_code":0,"http_title":"","ip_metadata":{"asn":0,"organization":"","isp":"","country_code":"",` +
	`"country_name":"","city_name":"","region":"","postal_code":"","location_latitude":0,"location_longitude":0},` +
	`"network_ports":[],"network_services":[{"port":443,"protocol":"tcp","service":"https","product":"","version":"",` +
	`"banner":"","first_seen":0,"last_seen":0}],"products":[],"tags":[],"web":[],"cert_object":{"subject_common_name":"",` +
	`"subject_organization":"","issuer_common_name":"","issuer_organization":"","not_before":0,"not_after":0,` +
	`"dns_names":[],"serial_number":"","sha256_fingerprint":"","sha1_fingerprint":"","md5_fingerprint":"",` +
	`"signature_algorithm":""},"first_seen":0,"last_seen":0}`

var (
	docDict     = s2.MakeDict([]byte(docDictText), nil)
	flateReader = sync.Pool{New: func() any { return flate.NewReader(nil) }}
)

// maxDocSize bounds an inflated document: a stored document is never near
// it, and a corrupt one must not inflate without limit.
const maxDocSize = 16 << 20

// encodeHostDoc returns the stored form of h (in canonical form: see
// host.Host.Derive).
func encodeHostDoc(h host.Host) ([]byte, error) {
	var e docEncoder
	return e.encode(h)
}

// docEncoder encodes host documents, keeping its buffers between hosts: a
// document is allocated once, at its size.
type docEncoder struct{ js, enc []byte }

func (e *docEncoder) encode(h host.Host) ([]byte, error) {
	js, err := h.AppendCanonicalJSON(e.js[:0])
	if err != nil {
		return nil, fmt.Errorf("encode host %q: %w", h.Host, err)
	}
	e.js = js
	if n := s2.MaxEncodedLen(len(js)); n < 0 {
		return nil, fmt.Errorf("encode host %q: %d bytes", h.Host, len(js))
	} else if cap(e.enc) < n {
		e.enc = make([]byte, n)
	}
	enc := docDict.Encode(e.enc[:cap(e.enc)], js)
	doc := make([]byte, 2+len(enc))
	doc[0], doc[1] = docS2Dict, docDictVersion
	copy(doc[2:], enc)
	return doc, nil
}

// decodeHostDoc reads a stored document into h. Documents this store wrote
// are decoded by host.DecodeJSON (encoding/json/v2's answers from a
// hand-written reader), about 10× faster than v1.
func decodeHostDoc(doc []byte, h *host.Host) error {
	switch {
	case len(doc) > 0 && doc[0] == '{':
		return json.Unmarshal(doc, h) // written by encoding/json, read by it
	case len(doc) > 0 && doc[0] == docS2Dict:
		if len(doc) < 2 || doc[1] != docDictVersion {
			return errors.New("host document: unknown dictionary")
		}
		n, err := s2.DecodedLen(doc[2:])
		if err != nil {
			return fmt.Errorf("host document: %w", err)
		}
		if n > maxDocSize {
			return fmt.Errorf("host document: %d bytes inflated", n)
		}
		js, err := docDict.Decode(make([]byte, n), doc[2:])
		if err != nil {
			return fmt.Errorf("host document: %w", err)
		}
		return host.DecodeJSON(js, h)
	}
	r := flateReader.Get().(io.ReadCloser)
	defer flateReader.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(doc), nil); err != nil {
		return err
	}
	js, err := io.ReadAll(io.LimitReader(r, maxDocSize))
	if err != nil {
		return fmt.Errorf("inflate host document: %w", err)
	}
	return json.Unmarshal(js, h)
}

// isCurrentDoc reports whether doc is in the form encodeHostDoc writes, so
// that comparing bytes tells whether the host changed.
func isCurrentDoc(doc []byte) bool {
	return len(doc) > 1 && doc[0] == docS2Dict && doc[1] == docDictVersion
}

// docJSON appends the canonical JSON of a stored document to dst: a
// document in the current form is decompressed only (it was written as the
// canonical JSON); an older one is decoded and encoded again.
func docJSON(dst, doc []byte) ([]byte, error) {
	if isCurrentDoc(doc) {
		n, err := s2.DecodedLen(doc[2:])
		if err != nil {
			return nil, fmt.Errorf("host document: %w", err)
		}
		if n > maxDocSize {
			return nil, fmt.Errorf("host document: %d bytes inflated", n)
		}
		if cap(dst) < n {
			dst = make([]byte, 0, n)
		}
		js, err := docDict.Decode(dst[:n], doc[2:])
		if err != nil {
			return nil, fmt.Errorf("host document: %w", err)
		}
		return js, nil
	}
	var h host.Host
	if err := decodeHostDoc(doc, &h); err != nil {
		return nil, err
	}
	return h.AppendCanonicalJSON(dst)
}
