package vuln

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ReadEPSS reads a FIRST EPSS scores file (epss_scores-YYYY-MM-DD.csv,
// plain or .gz): an optional "#model_version:...,score_date:..." comment
// line, a header with the columns cve, epss and percentile (found by
// name), then one row per CVE. Rows with a bad CVE id or a probability
// outside 0..1 are skipped; a file without those columns is an error.
func ReadEPSS(r io.Reader, name string, fn func(EPSSScore) error) (Result, error) {
	var res Result
	rc, err := decompress(r)
	if err != nil {
		return res, fmt.Errorf("read epss %s: %w", name, err)
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 64<<10)

	var model string
	var date time.Time
	lineOffset := 0
	if b, err := br.Peek(1); err == nil && b[0] == '#' {
		comment, err := br.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return res, fmt.Errorf("read epss %s: %w", name, err)
		}
		lineOffset = 1
		model, date, err = parseEPSSComment(comment)
		if err != nil {
			return res, fmt.Errorf("read epss %s:1: %w", name, err)
		}
	}
	t, err := newCSVTable(br, name, "cve", "epss", "percentile")
	if err != nil {
		return res, fmt.Errorf("read epss: %w", err)
	}
	for {
		rec, line, err := t.next()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		line += lineOffset
		pos := fmt.Sprintf("line %d", line)
		if err != nil {
			if line == lineOffset {
				return res, fmt.Errorf("read epss %s: %w", name, err)
			}
			res.skip(Skip{Source: name, Pos: pos, Reason: err.Error()})
			continue
		}
		s := EPSSScore{CVEID: t.get(rec, "cve"), ModelVersion: model, ScoreDate: date}
		if !cveIDPattern.MatchString(s.CVEID) {
			res.skip(Skip{Source: name, Pos: pos, ID: s.CVEID, Reason: fmt.Sprintf("bad CVE id %q", s.CVEID)})
			continue
		}
		if s.EPSS, err = probability(t.get(rec, "epss")); err != nil {
			res.skip(Skip{Source: name, Pos: pos, ID: s.CVEID, Reason: "epss: " + err.Error()})
			continue
		}
		if s.Percentile, err = probability(t.get(rec, "percentile")); err != nil {
			res.skip(Skip{Source: name, Pos: pos, ID: s.CVEID, Reason: "percentile: " + err.Error()})
			continue
		}
		res.Records++
		if err := fn(s); err != nil {
			return res, err
		}
	}
}

// parseEPSSComment reads "#model_version:v2023.03.01,score_date:2025-02-20T00:00:00+0000".
func parseEPSSComment(line string) (model string, date time.Time, err error) {
	line = strings.TrimSpace(strings.TrimPrefix(line, "#"))
	for _, part := range strings.Split(line, ",") {
		k, v, _ := strings.Cut(part, ":")
		switch strings.TrimSpace(k) {
		case "model_version":
			model = strings.TrimSpace(v)
		case "score_date":
			v = strings.TrimSpace(v)
			for _, layout := range []string{"2006-01-02T15:04:05-0700", time.RFC3339, time.DateOnly} {
				if date, err = time.Parse(layout, v); err == nil {
					break
				}
			}
			if err != nil {
				return "", time.Time{}, fmt.Errorf("bad score_date %q", v)
			}
			date = date.UTC()
		}
	}
	return model, date, nil
}

func probability(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number: %q", s)
	}
	if f < 0 || f > 1 || f != f {
		return 0, fmt.Errorf("%v outside 0..1", f)
	}
	return f, nil
}
