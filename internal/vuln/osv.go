package vuln

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/cvss"
	"github.com/periscope-oss/periscope/internal/jsontext"
	"github.com/periscope-oss/periscope/internal/textenc"
)

// maxOSVRecord bounds the size of one OSV file; real records are a few
// kilobytes, the largest known are under 2 MB.
const maxOSVRecord = 16 << 20

// osvRecord is the subset of the OSV schema (1.x) Periscope reads.
type osvRecord struct {
	ID        string   `json:"id"`
	Modified  string   `json:"modified"`
	Published string   `json:"published"`
	Withdrawn string   `json:"withdrawn"`
	Aliases   []string `json:"aliases"`
	Summary   string   `json:"summary"`
	Details   string   `json:"details"`
	Severity  []struct {
		Type  string `json:"type"`
		Score string `json:"score"`
	} `json:"severity"`
	Affected []struct {
		Package struct {
			Ecosystem string `json:"ecosystem"`
			Name      string `json:"name"`
			PURL      string `json:"purl"`
		} `json:"package"`
		Ranges   []Range  `json:"ranges"`
		Versions []string `json:"versions"`
		Severity []struct {
			Type  string `json:"type"`
			Score string `json:"score"`
		} `json:"severity"`
	} `json:"affected"`
	References []struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	} `json:"references"`
	DatabaseSpecific json.RawMessage `json:"database_specific"`
}

// ParseOSV parses one OSV JSON document into an Advisory. Errors give the
// line and column of JSON syntax errors and the reason a record is
// unusable (no id, bad timestamp, invalid CVSS vector).
func ParseOSV(r io.Reader) (Advisory, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxOSVRecord+1))
	if err != nil {
		return Advisory{}, fmt.Errorf("read osv record: %w", err)
	}
	if len(data) > maxOSVRecord {
		return Advisory{}, fmt.Errorf("osv record larger than %d bytes", maxOSVRecord)
	}
	return parseOSV(data)
}

func parseOSV(data []byte) (Advisory, error) {
	data = textenc.Bytes(data)
	var rec osvRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return Advisory{}, jsonError(data, err)
	}
	return rec.advisory()
}

func (rec *osvRecord) advisory() (Advisory, error) {
	if strings.TrimSpace(rec.ID) == "" {
		return Advisory{}, errors.New(`missing "id"`)
	}
	a := Advisory{
		ID:      rec.ID,
		Aliases: rec.Aliases,
		Summary: rec.Summary,
		Details: rec.Details,
	}
	var err error
	if a.Published, err = parseOSVTime("published", rec.Published); err != nil {
		return a, err
	}
	if a.Modified, err = parseOSVTime("modified", rec.Modified); err != nil {
		return a, err
	}
	if a.Withdrawn, err = parseOSVTime("withdrawn", rec.Withdrawn); err != nil {
		return a, err
	}
	var dbs struct {
		Severity string `json:"severity"`
		Source   string `json:"source"`
	}
	if len(rec.DatabaseSpecific) > 0 {
		// database_specific is free-form; only use it when the fields we
		// want are strings.
		_ = json.Unmarshal(rec.DatabaseSpecific, &dbs)
	}
	a.Source = AdvisorySource(rec.ID, dbs.Source)

	var vectors []string
	for _, s := range rec.Severity {
		if strings.HasPrefix(s.Type, "CVSS_") {
			vectors = append(vectors, s.Score)
		}
	}
	for _, af := range rec.Affected {
		a.Affected = append(a.Affected, Affected{
			Ecosystem: af.Package.Ecosystem,
			Name:      af.Package.Name,
			PURL:      af.Package.PURL,
			Ranges:    af.Ranges,
			Versions:  af.Versions,
		})
		for _, s := range af.Severity {
			if strings.HasPrefix(s.Type, "CVSS_") {
				vectors = append(vectors, s.Score)
			}
		}
	}
	for _, ref := range rec.References {
		if ref.URL != "" {
			a.References = append(a.References, ref.URL)
		}
	}
	v, ok, err := preferredVector(vectors)
	if err != nil {
		return a, err
	}
	if ok {
		a.CVSSVector = v.String()
		a.CVSSScore = v.BaseScore()
		a.Severity = v.Severity()
	} else {
		a.Severity = severityWord(dbs.Severity)
	}
	return a, nil
}

// preferredVector parses every vector and returns the one to take the
// severity from: CVSS v3.1, then v3.0, then v4.0, then v2. Any invalid
// vector is an error: a record carrying one is rejected.
func preferredVector(vectors []string) (cvss.Vector, bool, error) {
	rank := map[cvss.Version]int{cvss.V31: 4, cvss.V30: 3, cvss.V40: 2, cvss.V2: 1}
	var best cvss.Vector
	found := false
	for _, s := range vectors {
		v, err := cvss.Parse(s)
		if err != nil {
			return cvss.Vector{}, false, fmt.Errorf("invalid CVSS vector: %w", err)
		}
		if !found || rank[v.Version()] > rank[best.Version()] {
			best, found = v, true
		}
	}
	return best, found, nil
}

// severityWord normalises a database's own severity label (GitHub uses
// LOW, MODERATE, HIGH, CRITICAL) to Periscope's words; unknown labels
// give "".
func severityWord(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "critical":
		return "critical"
	case "high", "important":
		return "high"
	case "moderate", "medium":
		return "medium"
	case "low":
		return "low"
	case "none":
		return "none"
	}
	return ""
}

func parseOSVTime(field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad %q timestamp %q: want RFC 3339", field, s)
	}
	if t.IsZero() || t.Year() <= 1 {
		return time.Time{}, nil
	}
	return t.UTC(), nil
}

// ReadOSV reads OSV records from path, which may be a single .json file,
// a directory (searched recursively for .json files) or a .zip archive
// such as an OSV all.zip. Each advisory is passed to fn; if fn returns an
// error, reading stops and that error is returned.
func ReadOSV(path string, fn func(Advisory) error) (Result, error) {
	st, err := os.Stat(path)
	if err != nil {
		return Result{}, fmt.Errorf("read osv %s: %w", path, err)
	}
	switch {
	case st.IsDir():
		return ReadOSVDir(path, fn)
	case strings.HasSuffix(strings.ToLower(path), ".zip"):
		return ReadOSVZip(path, fn)
	}
	var res Result
	f, err := os.Open(path)
	if err != nil {
		return res, fmt.Errorf("read osv %s: %w", path, err)
	}
	defer f.Close()
	a, err := ParseOSV(f)
	if err != nil {
		res.skip(Skip{Source: path, Pos: "file", Reason: err.Error()})
		return res, nil
	}
	res.Records++
	return res, fn(a)
}

// ReadOSVDir reads every .json file under dir, in lexical order.
func ReadOSVDir(dir string, fn func(Advisory) error) (Result, error) {
	var res Result
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".json") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		a, perr := ParseOSV(f)
		f.Close()
		return res.deliver(path, a, perr, fn)
	})
	if err != nil {
		return res, fmt.Errorf("read osv directory %s: %w", dir, err)
	}
	return res, nil
}

// ReadOSVZip reads every .json entry of a zip archive (OSV publishes one
// all.zip per ecosystem), one entry at a time. A corrupt entry is
// skipped; an unreadable archive is an error.
func ReadOSVZip(path string, fn func(Advisory) error) (Result, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return Result{}, fmt.Errorf("read osv archive %s: %w", path, err)
	}
	defer zr.Close()
	return readOSVZip(&zr.Reader, path, fn)
}

// ReadOSVZipReader is ReadOSVZip for an archive already in memory or
// behind an io.ReaderAt (such as an HTTP download saved to a temp file).
func ReadOSVZipReader(r io.ReaderAt, size int64, name string, fn func(Advisory) error) (Result, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return Result{}, fmt.Errorf("read osv archive %s: %w", name, err)
	}
	return readOSVZip(zr, name, fn)
}

func readOSVZip(zr *zip.Reader, name string, fn func(Advisory) error) (Result, error) {
	var res Result
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() || !strings.HasSuffix(zf.Name, ".json") {
			continue
		}
		src := name + "!" + zf.Name
		if zf.UncompressedSize64 > maxOSVRecord {
			res.skip(Skip{Source: src, Pos: "entry", Reason: fmt.Sprintf("entry larger than %d bytes", maxOSVRecord)})
			continue
		}
		rc, err := zf.Open()
		if err != nil {
			res.skip(Skip{Source: src, Pos: "entry", Reason: err.Error()})
			continue
		}
		a, perr := ParseOSV(rc)
		rc.Close()
		if err := res.deliver(src, a, perr, fn); err != nil {
			return res, err
		}
	}
	return res, nil
}

// deliver records a parse failure as a skip, or passes the advisory on.
func (r *Result) deliver(src string, a Advisory, perr error, fn func(Advisory) error) error {
	if perr != nil {
		r.skip(Skip{Source: src, Pos: "file", ID: a.ID, Reason: perr.Error()})
		return nil
	}
	r.Records++
	return fn(a)
}

// jsonError rewrites encoding/json errors with line and column numbers.
func jsonError(data []byte, err error) error {
	return jsontext.Explain(data, err)
}
