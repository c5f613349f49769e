package vuln

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// csvTable reads a CSV file whose columns are found by header name.
type csvTable struct {
	r    *csv.Reader
	name string
	cols map[string]int
}

// newCSVTable reads the header row and checks that every required column
// is present. Header names are matched case-insensitively.
func newCSVTable(r io.Reader, name string, required ...string) (*csvTable, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.LazyQuotes = true
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty file, no header row", name)
		}
		return nil, fmt.Errorf("%s: header: %w", name, err)
	}
	t := &csvTable{r: cr, name: name, cols: make(map[string]int, len(header))}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if _, dup := t.cols[h]; !dup {
			t.cols[h] = i
		}
	}
	var missing []string
	for _, c := range required {
		if _, ok := t.cols[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		line, _ := cr.FieldPos(0)
		return nil, fmt.Errorf("%s:%d: header lacks required column(s) %s (have %s)", name, line, strings.Join(missing, ", "), strings.Join(header, ","))
	}
	return t, nil
}

// has reports whether the file has the column.
func (t *csvTable) has(col string) bool {
	_, ok := t.cols[col]
	return ok
}

// next returns the next row and its line number; io.EOF at the end. A
// malformed row gives a *csv.ParseError with its line; reading may go on.
func (t *csvTable) next() ([]string, int, error) {
	rec, err := t.r.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, pe.Line, err
		}
		return nil, 0, err
	}
	line, _ := t.r.FieldPos(0)
	return rec, line, nil
}

// get returns a row's value for a column, or "" when the column is absent
// or the row is short.
func (t *csvTable) get(rec []string, col string) string {
	i, ok := t.cols[col]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}
