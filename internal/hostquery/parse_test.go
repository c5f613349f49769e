package hostquery

import (
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/periscope"
)

// show prints a parsed tree compactly, for comparisons.
func show(n *Node) string {
	switch n.Op {
	case NodeAnd, NodeOr:
		op := map[NodeOp]string{NodeAnd: "AND", NodeOr: "OR"}[n.Op]
		var parts []string
		for _, k := range n.Kids {
			parts = append(parts, show(k))
		}
		return "(" + op + " " + strings.Join(parts, " ") + ")"
	case NodeNot:
		return "(NOT " + show(n.Kids[0]) + ")"
	}
	var vals []string
	for _, v := range n.Vals {
		if v.Range {
			lo, hi := "(", ")"
			if v.LoIncl {
				lo = "["
			}
			if v.HiIncl {
				hi = "]"
			}
			vals = append(vals, lo+v.Lo+".."+v.Hi+hi)
			continue
		}
		vals = append(vals, "'"+v.Text+"'")
	}
	if n.Field == "" {
		return "text:" + vals[0]
	}
	return n.Field + ":" + strings.Join(vals, "|")
}

func TestParse(t *testing.T) {
	cases := []struct{ in, want string }{
		{`country:US`, `country:'US'`},
		{`country:US port:443`, `(AND country:'US' port:'443')`},
		{`country:US AND port:443`, `(AND country:'US' port:'443')`},
		{`port:22,80,443`, `port:'22'|'80'|'443'`},
		{`-port:22,80`, `(NOT port:'22'|'80')`},
		{`NOT port:22`, `(NOT port:'22')`},
		{`a OR b c`, `(OR text:'a' (AND text:'b' text:'c'))`},
		{`(a OR b) c`, `(AND (OR text:'a' text:'b') text:'c')`},
		{`product:"Apache httpd"`, `product:'Apache httpd'`},
		{`product:"a,b",nginx`, `product:'a,b'|'nginx'`},
		{`port:>1024`, `port:(1024..)`},
		{`port:>=1024`, `port:[1024..)`},
		{`http_status_code:<400`, `http_status_code:(..400)`},
		{`port:[8000 TO 8999]`, `port:[8000..8999]`},
		{`port:[8000 TO *]`, `port:[8000..]`},
		{`last_seen:>2026-11-01`, `last_seen:(2026-11-01..)`},
		{`ip:2001:db8::1`, `ip:'2001:db8::1'`},
		{`"welcome page" -tag:cdn`, `(AND text:'welcome page' (NOT tag:'cdn'))`},
		{`(port:22)`, `port:'22'`},
		{`http.title:"a \"b\""`, `http.title:'a "b"'`},
		{`-(a OR b)`, `(NOT (OR text:'a' text:'b'))`},
	}
	for _, c := range cases {
		q, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got := show(q.Root); got != c.want {
			t.Errorf("Parse(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{`contry:US`, `unknown field 'contry' at 1:1 (did you mean 'country'?)`},
		{`port:443 prot:22`, `unknown field 'prot' at 1:10 (did you mean 'port'?)`},
		{`zzzzzz:1`, `unknown field 'zzzzzz' at 1:1 (the fields are listed in docs/search.md)`},
		{``, `the query is empty: give at least one term, for example country:US or port:443`},
		{`(port:22`, `'(' is not closed, found end of query at 1:1`},
		{`port:22)`, `unexpected ')' at 1:8`},
		{`port:`, `field 'port' has no value at 1:1`},
		{`a OR`, `'OR' needs a term on each side, found end of query at 1:3`},
		{`AND a`, `'AND' needs a term on each side at 1:1`},
		{`product:"nginx`, `the quote is not closed at 1:9`},
		{`port:[1 TO]`, `bad range '[1 TO]': write it as [low TO high] at 1:6`},
		{`port:[1 TO 2`, `'[' is not closed: write a range as [low TO high] at 1:6`},
		{"a\n  contry:x", `unknown field 'contry' at 2:3 (did you mean 'country'?)`},
		{`-`, `'-' must be written against the term it negates (as in -port:22) at 1:1`},
		{`a - b`, `'-' must be written against the term it negates (as in -port:22) at 1:3`},
		{`-)`, `'-' needs a term after it, found ')' at 1:1`},
		{strings.Repeat("(", 9) + "a" + strings.Repeat(")", 9), `the query nests deeper than 8 levels at 1:9`},
		{strings.Repeat("port:1 ", 33), `the query has more than 32 terms at 1:230`},
		{strings.Repeat("w ", 9), `the query has more than 8 bare words and http_title values at 1:17`},
		{strings.Repeat("a", MaxLength+1), `the query is 2049 bytes long; the limit is 2048`},
		{"a\x00", `control character U+0000 at 1:2`},
	}
	for _, c := range cases {
		_, err := Parse(c.in)
		if err == nil {
			t.Errorf("Parse(%q): no error, want %q", c.in, c.want)
			continue
		}
		if code := periscope.ErrorCode(err); code != periscope.EQueryInvalid {
			t.Errorf("Parse(%q): code %s", c.in, code)
		}
		if got := periscope.ErrorMessage(err); got != c.want {
			t.Errorf("Parse(%q):\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestPlanErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{`port:abc`, `port must be an integer (got "abc") at 1:6`},
		{`port:22,x`, `port must be an integer (got "x") at 1:9`},
		{`country:[a TO b]`, `country is not a number or a date, so it takes no range at 1:9`},
		{`last_seen:>2026-13-01`, `last_seen takes dates written YYYY-MM-DD (got "2026-13-01") at 1:11`},
		{`domain:"not a name"`, `domain must be a domain name (got "not a name") at 1:8`},
		{`net:10.0.0.0/33`, `net must be a CIDR block or an IP address (got "10.0.0.0/33") at 1:5`},
		{`is_live:yes`, `is_live must be true or false at 1:9`},
		{`http_favicon_hash:1`, `http_favicon_hash is not indexed: none of the supported inputs carries favicon hashes at 1:19`},
	}
	for _, c := range cases {
		_, err := ParsePlan(c.in)
		if err == nil {
			t.Errorf("ParsePlan(%q): no error, want %q", c.in, c.want)
			continue
		}
		if code := periscope.ErrorCode(err); code != periscope.EQueryInvalid {
			t.Errorf("ParsePlan(%q): code %s", c.in, code)
		}
		if got := periscope.ErrorMessage(err); got != c.want {
			t.Errorf("ParsePlan(%q):\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
