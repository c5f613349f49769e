package store

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/periscope-oss/periscope/internal/host"
)

// Host documents are stored as DEFLATE-compressed JSON (the host object):
// a 1.5 KB document shrinks to about 600 bytes, so a page holds three times
// as many hosts and a large index reads and writes a third of the pages.
// A document starting with '{' is plain JSON (read as is).

var (
	flateWriters = sync.Pool{New: func() any {
		w, _ := flate.NewWriter(nil, flate.BestSpeed)
		return w
	}}
	flateReaders = sync.Pool{New: func() any { return flate.NewReader(nil) }}
)

// encodeHostDoc returns the stored form of h.
func encodeHostDoc(h host.Host) ([]byte, error) {
	js, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("encode host %q: %w", h.Host, err)
	}
	var buf bytes.Buffer
	buf.Grow(len(js) / 2)
	w := flateWriters.Get().(*flate.Writer)
	defer flateWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(js); err != nil {
		return nil, fmt.Errorf("compress host %q: %w", h.Host, err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compress host %q: %w", h.Host, err)
	}
	return buf.Bytes(), nil
}

// decodeHostDoc reads a stored document into h.
func decodeHostDoc(doc []byte, h *host.Host) error {
	if len(doc) > 0 && doc[0] == '{' {
		return json.Unmarshal(doc, h)
	}
	r := flateReaders.Get().(io.ReadCloser)
	defer flateReaders.Put(r)
	if err := r.(flate.Resetter).Reset(bytes.NewReader(doc), nil); err != nil {
		return err
	}
	// Bounded: a stored document is never near this size, and a corrupt
	// one must not inflate without limit.
	js, err := io.ReadAll(io.LimitReader(r, 16<<20))
	if err != nil {
		return fmt.Errorf("inflate host document: %w", err)
	}
	return json.Unmarshal(js, h)
}
