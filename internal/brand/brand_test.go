package brand

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func testMatcher(t testing.TB) *Matcher {
	t.Helper()
	m, err := New([]Brand{
		{Domain: "acme.com", Owned: []string{"acme-corp.net"}},
		{Domain: "paypal.com"},
		{Domain: "google.com"},
		{Domain: "my-bank.co.uk", Labels: []string{"mybank"}},
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type result struct {
	Brand, Kind, Fuzzer string
	Score               int
}

func TestMatch(t *testing.T) {
	m := testMatcher(t)
	tests := []struct {
		name string
		want []result
	}{
		// Phishing with the exact label as a token.
		{"acme-login.example", []result{{"acme.com", PotentialPhishing, "", 90}}},
		{"acme.secure-login.xyz", []result{{"acme.com", PotentialPhishing, "", 90}}},
		{"acme.com.evil.io", []result{{"acme.com", PotentialPhishing, "", 90}}},
		{"acme-com.evil.io", []result{{"acme.com", PotentialPhishing, "", 90}}},
		{"paypal-secure.com", []result{{"paypal.com", PotentialPhishing, "", 90}}},
		{"PayPal.Com.Verify-Account.TK.", []result{{"paypal.com", PotentialPhishing, "", 100}}},
		{"acme.com.au", []result{{"acme.com", PotentialPhishing, "", 80}}},
		{"acme-inc.com", []result{{"acme.com", PotentialPhishing, "", 80}}},
		// Glued to a keyword.
		{"acmelogin.xyz", []result{{"acme.com", PotentialPhishing, "", 70}}},
		{"verifyacme.io", []result{{"acme.com", PotentialPhishing, "", 70}}},
		// Look-alikes outside the candidate sets.
		{"paypa1-verify.net", []result{{"paypal.com", PotentialPhishing, "", 60}}},
		{"xn--pypal-4ve.co", []result{{"paypal.com", PotentialPhishing, "", 50}}}, // Cyrillic а
		{"rnybank.org", []result{{"my-bank.co.uk", PotentialPhishing, "", 50}}},
		// Substrings of long labels only.
		{"mypaypalshop.com", []result{{"paypal.com", PotentialPhishing, "", 30}}},
		{"paypalsupportdesk.com", []result{{"paypal.com", PotentialPhishing, "", 70}}},
		{"acmeinc.com", nil},
		{"pacmen.com", nil},
		// Typosquatting candidates, also under a subdomain.
		{"login.paypa1.com", []result{{"paypal.com", TypoSquatting, "homoglyph", 95}}},
		{"gooogle.com", []result{{"google.com", TypoSquatting, "repetition", 90}}},
		{"www.goolge.com", []result{{"google.com", TypoSquatting, "transposition", 90}}},
		{"xn--e1ara49ctjc.com", []result{{"google.com", TypoSquatting, "cyrillic", 95}}},
		{"xn--ggle-55da.com", []result{{"google.com", PotentialPhishing, "", 50}}}, // two Cyrillic о
		{"goo.gle.com", []result{{"google.com", TypoSquatting, "subdomain", 85}}},
		{"acmecom.com", []result{{"acme.com", TypoSquatting, "various", 85}}},
		// The organization's own names are never reported.
		{"acme.com", nil},
		{"www.acme.com", nil},
		{"mail.eu.acme.com", nil},
		{"acme-corp.net", nil},
		{"login.acme-corp.net", nil},
		{"paypal.com", nil},
		// Unrelated names.
		{"example.org", nil},
		{"co.uk", nil},
		{"_dmarc.example.com", nil},
	}
	for _, tt := range tests {
		got, err := m.Match(tt.name)
		if err != nil {
			t.Errorf("Match(%q): %v", tt.name, err)
			continue
		}
		var res []result
		for _, g := range got {
			if g.Reason == "" {
				t.Errorf("Match(%q): empty reason", tt.name)
			}
			res = append(res, result{g.Brand, g.Kind, g.Fuzzer, g.Score})
		}
		if diff := cmp.Diff(tt.want, res); diff != "" {
			t.Errorf("Match(%q) (-want +got):\n%s\n%+v", tt.name, diff, got)
		}
	}
}

func TestMatchRanking(t *testing.T) {
	m := testMatcher(t)
	got, err := m.Match("paypal-acme.com.verify.example")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Brand != "acme.com" || got[1].Brand != "paypal.com" || got[0].Score < got[1].Score {
		t.Fatalf("want acme (embedded base domain) ranked above paypal, got %+v", got)
	}
	if !strings.Contains(got[0].Reason, "acme.com") || !strings.Contains(got[0].Reason, "verify") {
		t.Errorf("reason %q should name the base domain and the keyword", got[0].Reason)
	}
}

func TestMatchBadInput(t *testing.T) {
	m := testMatcher(t)
	for _, in := range []string{"", "  ", "a..b", strings.Repeat("a", 64) + ".com", "bad name.com", strings.Repeat("a", 2000)} {
		if _, err := m.Match(in); !errors.Is(err, ErrName) {
			t.Errorf("Match(%q) error = %v, want ErrName", in, err)
		}
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name   string
		brands []Brand
	}{
		{"public suffix", []Brand{{Domain: "co.uk"}}},
		{"empty", []Brand{{Domain: ""}}},
		{"subdomain", []Brand{{Domain: "www.acme.com"}}},
		{"duplicate", []Brand{{Domain: "acme.com"}, {Domain: "ACME.com"}}},
		{"short label", []Brand{{Domain: "acme.com", Labels: []string{"ac"}}}},
		{"mixed script", []Brand{{Domain: "pаypal.com"}}},
		{"long label", []Brand{{Domain: strings.Repeat("a", 200) + ".com"}}},
	}
	for _, tt := range tests {
		if _, err := New(tt.brands, Options{}); !errors.Is(err, ErrBrand) {
			t.Errorf("%s: error = %v, want ErrBrand", tt.name, err)
		}
	}
}

func TestWithWithout(t *testing.T) {
	m := testMatcher(t)
	if got, _ := m.Match("globex-login.com"); len(got) != 0 {
		t.Fatalf("before With: %+v", got)
	}
	m2, err := m.With(Brand{Domain: "globex.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := m2.Match("globex-login.com"); len(got) != 1 || got[0].Brand != "globex.com" {
		t.Errorf("after With: %+v", got)
	}
	if got, _ := m.Match("globex-login.com"); len(got) != 0 {
		t.Errorf("With changed the original matcher: %+v", got)
	}
	if _, err := m2.With(Brand{Domain: "globex.com"}); !errors.Is(err, ErrBrand) {
		t.Errorf("adding twice: err = %v", err)
	}
	m3 := m2.Without("paypal.com")
	if got, _ := m3.Match("paypal-secure.com"); len(got) != 0 {
		t.Errorf("after Without: %+v", got)
	}
	if got, _ := m3.Match("gooogle.com"); len(got) != 1 {
		t.Errorf("Without dropped another brand's candidates: %+v", got)
	}
	if diff := cmp.Diff([]string{"acme.com", "google.com", "my-bank.co.uk", "globex.com"}, m3.Brands()); diff != "" {
		t.Errorf("Brands (-want +got):\n%s", diff)
	}
}

func TestConcurrentMatch(t *testing.T) {
	m := testMatcher(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 200 {
				name := fmt.Sprintf("paypal-secure%d.com", i*1000+j)
				got, err := m.Match(name)
				if err != nil || len(got) != 1 {
					t.Errorf("Match(%q) = %+v, %v", name, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestSkeleton(t *testing.T) {
	tests := map[string]string{
		"paypal":  "paypal",
		"paypa1":  "paypal",
		"pаypаl":  "paypal",
		"rnybank": "mybank",
		"g00gle":  "google",
		"bücher":  "bucher",
		"vvindow": "wlndow",
		"a😀b":     "a_b",
	}
	for in, want := range tests {
		if got := skeletonString(in); got != want {
			t.Errorf("skeleton(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzMatch(f *testing.F) {
	m := testMatcher(f)
	for _, s := range []string{"acme-login.example", "login.paypa1.com", "xn--pypal-4ve.co", "co.uk", "", "a..b", "акме.рф", "rnybank.org"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := m.Match(name)
		if err != nil {
			return
		}
		for i, g := range got {
			if g.Score < 0 || g.Score > 100 || g.Reason == "" {
				t.Fatalf("bad match %+v", g)
			}
			if i > 0 && got[i-1].Score < g.Score {
				t.Fatalf("not ranked: %+v", got)
			}
		}
	})
}
