package darkweb

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
)

// ErrBinary is wrapped by the error of a file refused whole because it is
// not text (an archive, an executable, an image, a database, NUL or
// control bytes in its first bytes). Nothing of such a file is stored.
var ErrBinary = errors.New("binary file, not a text dump")

// ErrIncomplete is wrapped by the error of a file that ends inside a
// record: a JSON array or NDJSON record cut mid-way, a gzip stream cut
// short or corrupt, a read that failed mid-file. The complete records
// before the cut are stored; the truncated tail is rejected with its
// file:line.
var ErrIncomplete = errors.New("incomplete file")

// sniffLen is how much of a file's head decides whether it is text.
const sniffLen = 8 << 10

// signatures are the magic numbers of formats that are never a text dump.
var signatures = []struct {
	magic, name string
}{
	{"PK\x03\x04", "zip archive (unzip it first)"},
	{"PK\x05\x06", "empty zip archive"},
	{"7z\xbc\xaf\x27\x1c", "7-Zip archive (extract it first)"},
	{"Rar!\x1a\x07", "RAR archive (extract it first)"},
	{"BZh", "bzip2 stream (bunzip2 it first)"},
	{"\xfd7zXZ\x00", "xz stream (unxz it first)"},
	{"\x28\xb5\x2f\xfd", "zstd stream (unzstd it first)"},
	{"\x7fELF", "ELF executable"},
	{"MZ", "Windows executable"},
	{"\xca\xfe\xba\xbe", "Mach-O or Java class file"},
	{"\xcf\xfa\xed\xfe", "Mach-O executable"},
	{"%PDF-", "PDF document"},
	{"\x89PNG\r\n\x1a\n", "PNG image"},
	{"\xff\xd8\xff", "JPEG image"},
	{"GIF8", "GIF image"},
	{"SQLite format 3\x00", "SQLite database (export it as CSV first)"},
	{"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "Microsoft Office document (export it as CSV first)"},
	{"PAR1", "Parquet file"},
	{"\xff\xfe", "UTF-16 text (convert it to UTF-8: iconv -f UTF-16 -t UTF-8)"},
	{"\xfe\xff", "UTF-16 text (convert it to UTF-8: iconv -f UTF-16 -t UTF-8)"},
}

// binaryKind names what head (a file's first bytes) is when it is not
// text, or returns "". A NUL byte, or more than 1 byte in 20 being a C0
// control other than tab, newline, carriage return, form feed, vertical
// tab and escape, make a file binary whatever its signature.
func binaryKind(head []byte) string {
	for _, s := range signatures {
		if bytes.HasPrefix(head, []byte(s.magic)) {
			// "MZ" and "BZh" also begin ordinary words: ask for more.
			if s.magic == "MZ" && !bytes.ContainsRune(head[:min(len(head), 512)], 0) {
				continue
			}
			if s.magic == "BZh" && (len(head) < 4 || head[3] < '1' || head[3] > '9' || !bytes.HasPrefix(head[4:], []byte("1AY&SY"))) {
				continue
			}
			return s.name
		}
	}
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return fmt.Sprintf("NUL byte at offset %d", i)
	}
	ctl := 0
	for _, c := range head {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1b || c == 0x7f {
			ctl++
		}
	}
	if ctl > 0 && ctl*20 > len(head) {
		return fmt.Sprintf("%d control bytes in the first %d", ctl, len(head))
	}
	return ""
}

func isGzip(head []byte) bool {
	return len(head) >= 3 && head[0] == 0x1f && head[1] == 0x8b && head[2] == 8
}

// textInput checks the head of br: a gzip stream is read through (once:
// gzip inside gzip is refused), a binary file is refused with an error
// wrapping ErrBinary before anything is read from it.
func textInput(br *bufio.Reader, file string) (*bufio.Reader, error) {
	head, _ := br.Peek(sniffLen)
	if isGzip(head) {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: gzip header: %v: nothing stored", file, err)
		}
		br = bufio.NewReaderSize(gz, br.Size())
		head, _ = br.Peek(sniffLen)
		if isGzip(head) {
			return nil, fmt.Errorf("%s: %w (gzip inside gzip): nothing stored", file, ErrBinary)
		}
	}
	if what := binaryKind(head); what != "" {
		return nil, fmt.Errorf("%s: %w (%s): nothing stored", file, ErrBinary, what)
	}
	return br, nil
}
