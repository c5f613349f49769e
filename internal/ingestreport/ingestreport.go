// Package ingestreport is the one summary every `periscope ingest` kind
// prints: what was read, stored, found unchanged, skipped (with the
// reasons and how many each) and rejected (with the first few records'
// positions), how long it took and how fast, as one line of text for
// people or one JSON object for scripts. Each ingest pipeline keeps its
// own counters and fills a Summary at the end; the printing is here.
package ingestreport

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// MaxRejects bounds the rejections a Summary lists.
const MaxRejects = 100

// Summary reports one ingest run over any number of sources.
type Summary struct {
	Kind    string `json:"kind"`
	Sources int    `json:"sources"`
	// Read counts the input records read, rejected and skipped ones
	// included (certificates, lines, rows, answers: the kind's unit).
	Read      int `json:"read"`
	Inserted  int `json:"inserted"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
	// Skipped counts well-formed records with nothing to store, by
	// reason in SkippedBy ("host down": 498).
	Skipped   int            `json:"skipped"`
	SkippedBy map[string]int `json:"skipped_by"`
	// Rejected counts records refused as malformed; Rejects lists the
	// first MaxRejects as "source:position: reason".
	Rejected int      `json:"rejected"`
	Rejects  []string `json:"rejects"`
	// Incomplete counts sources cut short (their complete records stored).
	Incomplete int           `json:"incomplete,omitempty"`
	Duration   time.Duration `json:"-"`
	// Extra holds a kind's own counts ("hosts": names the certificates
	// put in the host index), printed after the common ones.
	Extra map[string]int `json:"extra,omitempty"`
}

// Stored is how many records the run inserted or changed.
func (s Summary) Stored() int { return s.Inserted + s.Updated }

// Skip counts one skipped record with its reason.
func (s *Summary) Skip(reason string, n int) {
	if n <= 0 {
		return
	}
	if s.SkippedBy == nil {
		s.SkippedBy = map[string]int{}
	}
	s.SkippedBy[reason] += n
	s.Skipped += n
}

// Reject counts one rejected record; its reason is kept while fewer than
// MaxRejects are.
func (s *Summary) Reject(reason string) {
	s.Rejected++
	if len(s.Rejects) < MaxRejects {
		s.Rejects = append(s.Rejects, reason)
	}
}

// AddRejects adds n rejections of which reasons are the first few.
func (s *Summary) AddRejects(n int, reasons []string) {
	s.Rejected += n
	for _, r := range reasons {
		if len(s.Rejects) < MaxRejects {
			s.Rejects = append(s.Rejects, r)
		}
	}
}

// Rate is the records read per second.
func (s Summary) Rate() float64 {
	return float64(s.Read) / max(s.Duration.Seconds(), 1e-9)
}

// reasons returns the skip reasons, most frequent first, then by name.
func (s Summary) reasons() []string {
	rs := slices.Collect(maps.Keys(s.SkippedBy))
	slices.SortFunc(rs, func(a, b string) int {
		if d := s.SkippedBy[b] - s.SkippedBy[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return rs
}

// SkipLine is "skipped 506: 498 hosts down, 8 private addresses", or ""
// when nothing was skipped.
func (s Summary) SkipLine() string {
	if s.Skipped == 0 {
		return ""
	}
	var parts []string
	for _, r := range s.reasons() {
		parts = append(parts, fmt.Sprintf("%d %s", s.SkippedBy[r], r))
	}
	if n := s.Skipped - sum(s.SkippedBy); n > 0 {
		parts = append(parts, fmt.Sprintf("%d for no stated reason", n))
	}
	return fmt.Sprintf("skipped %d: %s", s.Skipped, strings.Join(parts, ", "))
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// WriteText writes the summary for people: one line of counts, then the
// skip reasons and the first rejections, one a line.
//
//	httpx: 2 sources: read 1000, stored 980 (inserted 900, updated 80), unchanged 0, skipped 12, rejected 8 in 1.2s (833 records/s)
//	  skipped 12: 10 closed ports, 2 hosts down
//	  rejected a.jsonl:17: invalid JSON
func (s Summary) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%s: %d source(s): read %d, stored %d (inserted %d, updated %d), unchanged %d, skipped %d, rejected %d",
		s.Kind, s.Sources, s.Read, s.Stored(), s.Inserted, s.Updated, s.Unchanged, s.Skipped, s.Rejected)
	for _, k := range slices.Sorted(maps.Keys(s.Extra)) {
		fmt.Fprintf(w, ", %s %d", k, s.Extra[k])
	}
	fmt.Fprintf(w, " in %s (%.0f records/s)\n", s.Duration.Round(time.Millisecond), s.Rate())
	if l := s.SkipLine(); l != "" {
		fmt.Fprintf(w, "  %s\n", l)
	}
	for _, r := range s.Rejects {
		fmt.Fprintf(w, "  rejected %s\n", r)
	}
	if s.Rejected > len(s.Rejects) {
		fmt.Fprintf(w, "  ... and %d more rejected\n", s.Rejected-len(s.Rejects))
	}
	if s.Incomplete > 0 {
		fmt.Fprintf(w, "  %d source(s) incomplete: their complete records are stored, the cut tail rejected\n", s.Incomplete)
	}
}

// jsonSummary is the JSON form: the same counts, with stored, the time in
// seconds and the rate.
type jsonSummary struct {
	Summary
	Stored  int     `json:"stored"`
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"records_per_second"`
}

// WriteJSON writes the summary as one JSON object and a newline, for
// scripts: the fields of WriteText under the names of Summary's JSON
// tags, plus stored, seconds and records_per_second. Lists and maps are
// never null.
func (s Summary) WriteJSON(w io.Writer) error {
	if s.SkippedBy == nil {
		s.SkippedBy = map[string]int{}
	}
	if s.Rejects == nil {
		s.Rejects = []string{}
	}
	b, err := json.Marshal(jsonSummary{Summary: s, Stored: s.Stored(), Seconds: s.Duration.Seconds(), Rate: s.Rate()})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// Write writes the summary as JSON when asJSON, else as text.
func (s Summary) Write(w io.Writer, asJSON bool) error {
	if asJSON {
		return s.WriteJSON(w)
	}
	s.WriteText(w)
	return nil
}
