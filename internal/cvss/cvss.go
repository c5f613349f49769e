// Package cvss parses CVSS vector strings (versions 2.0, 3.0, 3.1 and 4.0)
// and scores them as the FIRST specifications define them: v2 and v3.x
// through github.com/pandatix/go-cvss; v4.0 here (v4.go), because
// go-cvss v0.6.4 rounds some v4.0 scores a tenth away from the FIRST
// calculator's (its issue 292: about 500 of the 419,904 base and threat
// vectors), and a score a user was answered must not move.
//
// Parse accepts a vector string, checks it against the metric definitions
// of its version (with errors that say which metric is wrong, the words
// ingest rejects carry), writes it in canonical form and scores it;
// BaseScore returns the score. For
// CVSS v2 and v3.x that is the Base score (temporal and environmental
// metrics are accepted but do not change it). For CVSS v4.0 there is only
// one formula: the score takes every threat and environmental metric
// present in the vector into account (CVSS-B, CVSS-BT, CVSS-BE or
// CVSS-BTE in the specification's nomenclature), which is what NVD and
// other publishers report as the v4.0 "baseScore".
package cvss

import (
	"errors"
	"fmt"
	"math"
	"strings"

	gocvss20 "github.com/pandatix/go-cvss/20"
	gocvss30 "github.com/pandatix/go-cvss/30"
	gocvss31 "github.com/pandatix/go-cvss/31"
)

// Version is a CVSS specification version.
type Version int

// The supported CVSS versions.
const (
	V2 Version = iota + 1
	V30
	V31
	V40
)

// String returns the version as written in vector prefixes, e.g. "3.1".
func (v Version) String() string {
	switch v {
	case V2:
		return "2.0"
	case V30:
		return "3.0"
	case V31:
		return "3.1"
	case V40:
		return "4.0"
	}
	return fmt.Sprintf("Version(%d)", int(v))
}

// Errors returned (wrapped, with details) by Parse. Test with errors.Is.
var (
	ErrEmpty           = errors.New("empty vector")
	ErrBadPrefix       = errors.New("bad or unsupported prefix")
	ErrMalformed       = errors.New("malformed metric")
	ErrUnknownMetric   = errors.New("unknown metric")
	ErrDuplicateMetric = errors.New("duplicate metric")
	ErrBadValue        = errors.New("invalid metric value")
	ErrMissingMetric   = errors.New("missing mandatory metric")
)

// maxMetrics bounds the number of metrics in any version (v4.0 has 32).
const maxMetrics = 32

// metricDef describes one metric of a version: its abbreviation, the
// values it accepts and whether a vector must carry it.
type metricDef struct {
	name      string
	values    []string
	mandatory bool
}

// spec is the metric table of one version.
type spec struct {
	version Version
	metrics []metricDef
	index   map[string]int
}

func newSpec(v Version, defs []metricDef) *spec {
	if len(defs) > maxMetrics {
		panic("cvss: too many metrics in table") // programming error, caught by tests
	}
	s := &spec{version: v, metrics: defs, index: make(map[string]int, len(defs))}
	for i, d := range defs {
		s.index[d.name] = i
	}
	return s
}

// Vector is a parsed, validated CVSS vector. The zero Vector is not valid;
// obtain one from Parse.
type Vector struct {
	spec *spec
	// vals[i] is 1 + the index of metric i's value in spec.metrics[i].values,
	// or 0 when the metric is absent from the vector.
	vals [maxMetrics]uint8
	// score is the vector's score (BaseScore), computed by Parse.
	score float64
}

// Parse parses a CVSS vector string. Versions are recognised by prefix:
// "CVSS:4.0/", "CVSS:3.1/", "CVSS:3.0/"; a vector without a prefix (as NVD
// writes them) is CVSS v2, optionally wrapped in parentheses or prefixed
// "CVSS:2.0/". Surrounding white space is ignored. Metrics may appear in
// any order but only once; every mandatory (base) metric must be present.
func Parse(vector string) (Vector, error) {
	s := strings.TrimSpace(vector)
	if s == "" {
		return Vector{}, fmt.Errorf("cvss: parse %q: %w", vector, ErrEmpty)
	}
	var sp *spec
	body := s
	switch {
	case strings.HasPrefix(s, "CVSS:4.0/"):
		sp, body = v4Spec, s[len("CVSS:4.0/"):]
	case strings.HasPrefix(s, "CVSS:3.1/"):
		sp, body = v31Spec, s[len("CVSS:3.1/"):]
	case strings.HasPrefix(s, "CVSS:3.0/"):
		sp, body = v30Spec, s[len("CVSS:3.0/"):]
	case strings.HasPrefix(s, "CVSS:2.0/"):
		sp, body = v2Spec, s[len("CVSS:2.0/"):]
	case strings.HasPrefix(s, "CVSS:"):
		end := strings.IndexByte(s, '/')
		if end < 0 {
			end = len(s)
		}
		return Vector{}, fmt.Errorf("cvss: parse %q: %w %q", vector, ErrBadPrefix, s[:end])
	default:
		sp = v2Spec
		if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
			body = s[1 : len(s)-1]
		}
	}
	v := Vector{spec: sp}
	pos := len(s) - len(body) // byte offset of the current metric in s
	for body != "" {
		part := body
		if i := strings.IndexByte(body, '/'); i >= 0 {
			part, body = body[:i], body[i+1:]
			if body == "" {
				return Vector{}, fmt.Errorf("cvss: parse %q: %w: trailing '/'", vector, ErrMalformed)
			}
		} else {
			body = ""
		}
		if err := v.set(part); err != nil {
			return Vector{}, fmt.Errorf("cvss: parse %q at offset %d: %w", vector, pos, err)
		}
		pos += len(part) + 1
	}
	for i, d := range sp.metrics {
		if d.mandatory && v.vals[i] == 0 {
			return Vector{}, fmt.Errorf("cvss: parse %q: %w %s", vector, ErrMissingMetric, d.name)
		}
	}
	if sp.version == V40 {
		v.score = v.v4Score()
		return v, nil
	}
	score, err := scoreOf(sp.version, v.baseVector())
	if err != nil {
		return Vector{}, fmt.Errorf("cvss: parse %q: %w: %v", vector, ErrBadValue, err)
	}
	v.score = score
	return v, nil
}

// baseVector is the vector scoreOf reads: the base metrics alone, in
// canonical order (the Base score of v2 and v3.x depends on nothing else,
// and go-cvss takes v2's temporal and environmental groups whole or not at
// all).
func (v Vector) baseVector() string {
	base := v
	for i, d := range v.spec.metrics {
		if !d.mandatory {
			base.vals[i] = 0
		}
	}
	return base.String()
}

// scoreOf scores a v2 or v3.x base vector in canonical form with go-cvss.
func scoreOf(version Version, canonical string) (float64, error) {
	switch version {
	case V2:
		c, err := gocvss20.ParseVector(canonical)
		if err != nil {
			return 0, err
		}
		return c.BaseScore(), nil
	case V30:
		c, err := gocvss30.ParseVector(canonical)
		if err != nil {
			return 0, err
		}
		return c.BaseScore(), nil
	case V31:
		c, err := gocvss31.ParseVector(canonical)
		if err != nil {
			return 0, err
		}
		return c.BaseScore(), nil
	}
	return 0, fmt.Errorf("unknown version %v", version)
}

// set records one "name:value" pair.
func (v *Vector) set(part string) error {
	name, value, ok := strings.Cut(part, ":")
	if !ok || name == "" || value == "" {
		return fmt.Errorf("%w %q: want name:value", ErrMalformed, part)
	}
	i, ok := v.spec.index[name]
	if !ok {
		return fmt.Errorf("%w %q for CVSS v%s", ErrUnknownMetric, name, v.spec.version)
	}
	if v.vals[i] != 0 {
		return fmt.Errorf("%w %q", ErrDuplicateMetric, name)
	}
	d := v.spec.metrics[i]
	for j, allowed := range d.values {
		if allowed == value {
			v.vals[i] = uint8(j + 1)
			return nil
		}
	}
	return fmt.Errorf("%w %s:%q (want one of %s)", ErrBadValue, name, value, strings.Join(d.values, ", "))
}

// Version reports the vector's CVSS version.
func (v Vector) Version() Version {
	if v.spec == nil {
		return 0
	}
	return v.spec.version
}

// Metric returns the value of the named metric and whether the vector
// carries it.
func (v Vector) Metric(name string) (string, bool) {
	if v.spec == nil {
		return "", false
	}
	i, ok := v.spec.index[name]
	if !ok || v.vals[i] == 0 {
		return "", false
	}
	return v.spec.metrics[i].values[v.vals[i]-1], true
}

// String returns the vector in canonical form: the version prefix (none
// for v2) followed by the metrics present, in specification order.
func (v Vector) String() string {
	if v.spec == nil {
		return ""
	}
	var b strings.Builder
	if v.spec.version != V2 {
		b.WriteString("CVSS:")
		b.WriteString(v.spec.version.String())
	}
	for i, d := range v.spec.metrics {
		if v.vals[i] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(d.name)
		b.WriteByte(':')
		b.WriteString(d.values[v.vals[i]-1])
	}
	return b.String()
}

// BaseScore returns the vector's score, rounded as the specification of
// its version requires (one decimal place). It returns 0 for the zero
// Vector.
func (v Vector) BaseScore() float64 { return v.score }

// Severity returns the qualitative rating of the vector's score using the
// scale of its version: CVSS v2 has no "critical" and no "none" rating
// (NVD rates v2 scores low, medium or high), later versions use Severity.
func (v Vector) Severity() string {
	score := v.BaseScore()
	if v.Version() == V2 {
		switch {
		case score >= 7.0:
			return "high"
		case score >= 4.0:
			return "medium"
		default:
			return "low"
		}
	}
	return Severity(score)
}

// Severity maps a CVSS v3.x / v4.0 score to its qualitative rating:
// "none" (0.0), "low" (0.1-3.9), "medium" (4.0-6.9), "high" (7.0-8.9) or
// "critical" (9.0-10.0). Scores outside 0..10 are clamped.
func Severity(score float64) string {
	switch {
	case math.IsNaN(score) || score < 0.05:
		return "none"
	case score < 3.95:
		return "low"
	case score < 6.95:
		return "medium"
	case score < 8.95:
		return "high"
	default:
		return "critical"
	}
}
