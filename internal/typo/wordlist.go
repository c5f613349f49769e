package typo

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"strings"
)

// ReadWordList reads a dictionary or suffix list in dnstwist's format: one
// entry per line, blank lines and lines starting with "//" or "#" ignored.
// Entries are lower-cased and de-duplicated in file order. An entry that is
// not a host-name fragment (letters, digits, hyphens and dots, at most 63
// octets per label) is an error naming its line.
func ReadWordList(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	var words []string
	seen := map[string]bool{}
	line := 0
	for sc.Scan() {
		line++
		w := strings.ToLower(strings.TrimSpace(sc.Text()))
		if w == "" || strings.HasPrefix(w, "//") || strings.HasPrefix(w, "#") {
			continue
		}
		if err := checkWord(w); err != nil {
			return nil, fmt.Errorf("word list line %d: %w", line, err)
		}
		if !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("word list after line %d: %w", line, err)
	}
	return words, nil
}

func checkWord(w string) error {
	for _, l := range strings.Split(w, ".") {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("%q: labels must have 1 to 63 characters", w)
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return fmt.Errorf("%q: character %q at position %d is not a letter, digit or hyphen", w, c, i+1)
			}
		}
	}
	return nil
}

// WriteCSV writes candidates as "fuzzer,domain" rows under that header, the
// layout of dnstwist's CSV output.
func WriteCSV(w io.Writer, candidates []Candidate) error {
	cw := csv.NewWriter(w)
	if err := cw.Write([]string{"fuzzer", "domain"}); err != nil {
		return fmt.Errorf("write csv header: %w", err)
	}
	for _, c := range candidates {
		if err := cw.Write([]string{c.Fuzzer, c.Domain}); err != nil {
			return fmt.Errorf("write csv row %q: %w", c.Domain, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}
