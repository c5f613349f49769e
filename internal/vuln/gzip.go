package vuln

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"

	"github.com/periscope-oss/periscope/internal/textenc"
)

// decompress returns r's content, transparently gunzipped when it starts
// with the gzip magic bytes, so callers can pass .json, .json.gz, .csv or
// .csv.gz alike, and decoded as all ingested text is (package textenc).
// Close releases the gzip reader (not r).
func decompress(r io.Reader) (io.ReadCloser, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(2)
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("read header: %w", err)
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("corrupt gzip: %w", err)
		}
		return struct {
			io.Reader
			io.Closer
		}{textenc.NewReader(zr), zr}, nil
	}
	return io.NopCloser(textenc.NewReader(br)), nil
}
