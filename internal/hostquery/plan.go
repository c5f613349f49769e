package hostquery

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/hoststore"
	"github.com/periscope-oss/periscope/internal/periscope"
)

// TextFields are the index fields a bare word or phrase searches besides
// the HTTP title: products, web technologies, service names and tags (a
// value containing the word, in any case).
var TextFields = []string{hoststore.TermProduct, hoststore.TermTech, hoststore.TermService, hoststore.TermTag}

// Plan maps a parsed query to the expression the host store evaluates.
// Its errors are query_invalid errors naming the position of the value.
func Plan(q *Query) (*hoststore.Expr, error) {
	return plan(q.Text, q.Root)
}

// ParsePlan parses and plans a query.
func ParsePlan(text string) (*hoststore.Expr, error) {
	q, err := Parse(text)
	if err != nil {
		return nil, err
	}
	return Plan(q)
}

func plan(src string, n *Node) (*hoststore.Expr, error) {
	switch n.Op {
	case NodeAnd, NodeOr, NodeNot:
		op := hoststore.OpAnd
		switch n.Op {
		case NodeOr:
			op = hoststore.OpOr
		case NodeNot:
			op = hoststore.OpNot
		}
		e := &hoststore.Expr{Op: op, Kids: make([]*hoststore.Expr, 0, len(n.Kids))}
		for _, k := range n.Kids {
			ke, err := plan(src, k)
			if err != nil {
				return nil, err
			}
			e.Kids = append(e.Kids, ke)
		}
		return e, nil
	}
	if n.Field == "" {
		w := n.Vals[0].Text
		return or([]*hoststore.Expr{
			leaf(hoststore.Cond{Kind: hoststore.CondTitle, Text: w}),
			leaf(hoststore.Cond{Kind: hoststore.CondTermContains, Fields: TextFields, Text: w}),
		}), nil
	}
	f := Fields[n.Field]
	var kids []*hoststore.Expr
	for _, v := range n.Vals {
		var c hoststore.Cond
		var err error
		if v.Range {
			c, err = rangeCond(f, v)
		} else if f.Kind == KindDate {
			var lo, hi int64
			if lo, hi, err = day(f.Name, v.Text); err == nil {
				c = hoststore.Cond{Kind: hoststore.CondLastSeen, Lo: lo, Hi: hi}
			}
		} else {
			c, err = Leaf(n.Field, value(f, v.Text))
		}
		if err != nil {
			return nil, located(src, v.Pos, err)
		}
		kids = append(kids, leaf(c))
	}
	return or(kids), nil
}

func leaf(c hoststore.Cond) *hoststore.Expr { return &hoststore.Expr{Op: hoststore.OpCond, Cond: c} }

func or(kids []*hoststore.Expr) *hoststore.Expr {
	if len(kids) == 1 {
		return kids[0]
	}
	return &hoststore.Expr{Op: hoststore.OpOr, Kids: kids}
}

// value is a value as the field's filter takes it: asn:AS13335 is
// asn:13335.
func value(f Field, v string) string {
	if f.Term == hoststore.TermASN && len(v) > 2 && strings.EqualFold(v[:2], "as") {
		return v[2:]
	}
	return v
}

// located turns a value error into a query_invalid error at the value.
func located(src string, off int, err error) error {
	msg := strings.TrimSuffix(periscope.ErrorMessage(err), ".")
	return invalid("%s at %s", msg, at(src, off))
}

// rangeCond is the condition of a range or comparison: numeric fields
// compare their indexed values (only hosts that have the field match),
// dates compare last_seen by UTC day.
func rangeCond(f Field, v Value) (hoststore.Cond, error) {
	switch f.Kind {
	case KindInt:
		lo, hi := int64(0), int64(math.MaxInt64)
		if v.Lo != "" {
			n, err := intBound(f, v.Lo)
			if err != nil {
				return hoststore.Cond{}, err
			}
			lo = n
			if !v.LoIncl {
				lo++
			}
		}
		if v.Hi != "" {
			n, err := intBound(f, v.Hi)
			if err != nil {
				return hoststore.Cond{}, err
			}
			hi = n
			if !v.HiIncl {
				hi--
			}
		}
		return hoststore.Cond{Kind: hoststore.CondTermRange, Field: f.Term, Lo: lo, Hi: hi}, nil
	case KindDate:
		lo, hi := int64(0), int64(math.MaxInt64)
		if v.Lo != "" {
			a, b, err := day(f.Name, v.Lo)
			if err != nil {
				return hoststore.Cond{}, err
			}
			lo = a
			if !v.LoIncl {
				lo = b + 1 // after that day
			}
		}
		if v.Hi != "" {
			a, b, err := day(f.Name, v.Hi)
			if err != nil {
				return hoststore.Cond{}, err
			}
			hi = b
			if !v.HiIncl {
				hi = a - 1 // before that day
			}
		}
		return hoststore.Cond{Kind: hoststore.CondLastSeen, Lo: lo, Hi: hi}, nil
	}
	return hoststore.Cond{}, periscope.Errorf(periscope.EInvalid, "%s is not a number or a date, so it takes no range", f.Name)
}

func intBound(f Field, s string) (int64, error) {
	n, err := strconv.ParseInt(value(f, s), 10, 64)
	if err != nil || n < 0 || n > 1<<32 {
		return 0, periscope.Errorf(periscope.EInvalid, "%s must be an integer (got %q)", f.Name, periscope.Clip(s, 64))
	}
	return n, nil
}

// day returns the first and last second of a UTC day written YYYY-MM-DD.
func day(name, s string) (lo, hi int64, err error) {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return 0, 0, periscope.Errorf(periscope.EInvalid, "%s takes dates written YYYY-MM-DD (got %q)", name, periscope.Clip(s, 64))
	}
	return t.Unix(), t.Unix() + 86399, nil
}

// Facet is a requested facet: a field and how many values to return.
type Facet struct {
	Name  string // as requested
	Term  string // the index field counted
	Limit int
}

// The facet bounds.
const (
	DefaultFacetLimit = 5
	MaxFacetLimit     = 100
	MaxFacets         = 10
)

// ParseFacets reads "country:10,port:5" (a field with no count takes
// DefaultFacetLimit). Errors are invalid_parameter errors naming facets.
func ParseFacets(s string) ([]Facet, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []Facet
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		name, num, hasNum := strings.Cut(strings.TrimSpace(part), ":")
		t, ok := facetTerm(name)
		if !ok {
			msg := "facets: '" + periscope.Clip(name, 64) + "' is not a facet field"
			if s := suggest(name); s != "" {
				if _, ok := facetTerm(s); ok {
					msg += " (did you mean '" + s + "'?)"
				}
			}
			return nil, periscope.Errorf(periscope.EInvalid, "%s; the facet fields are listed in docs/search.md.", msg)
		}
		limit := DefaultFacetLimit
		if hasNum {
			n, err := strconv.Atoi(num)
			if err != nil || n < 1 || n > MaxFacetLimit {
				return nil, periscope.Errorf(periscope.EInvalid, "facets: the count of '%s' must be an integer from 1 to %d (got %q).", name, MaxFacetLimit, periscope.Clip(num, 16))
			}
			limit = n
		}
		if seen[name] {
			return nil, periscope.Errorf(periscope.EInvalid, "facets: '%s' is asked for twice.", name)
		}
		seen[name] = true
		out = append(out, Facet{Name: name, Term: t, Limit: limit})
	}
	if len(out) > MaxFacets {
		return nil, periscope.Errorf(periscope.EInvalid, "facets: at most %d facets a request (got %d).", MaxFacets, len(out))
	}
	return out, nil
}

// FacetValue is one value of a facet as answered: Value is a string, or
// an integer for the numeric fields (port, asn, http_status_code).
type FacetValue struct {
	Value any `json:"value"`
	Count int `json:"count"`
}

// Display returns the facet's values as clients send them back: country
// codes upper-case, numbers as integers.
func (f Facet) Display(vals []hoststore.FacetValue) []FacetValue {
	out := make([]FacetValue, len(vals))
	numeric := Fields[f.Name].Kind == KindInt
	for i, v := range vals {
		out[i] = FacetValue{Value: facetDisplay(f.Name, v.Value), Count: v.Count}
		if numeric {
			if n, err := strconv.ParseInt(v.Value, 10, 64); err == nil {
				out[i].Value = n
			}
		}
	}
	return out
}
