package hostgen

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/periscope-oss/periscope/internal/host"
)

func generate(t *testing.T, n int, seed uint64) []host.Host {
	var hs []host.Host
	if err := New(n, seed, 1795000000).All(func(h host.Host) error { hs = append(hs, h); return nil }); err != nil {
		t.Fatal(err)
	}
	return hs
}

// The same count and seed give the same hosts (periscope-bench search relies on it).
func TestDeterministic(t *testing.T) {
	a, b := generate(t, 2000, 3), generate(t, 2000, 3)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two runs differ:\n%s", diff)
	}
	if c := generate(t, 2000, 4); cmp.Equal(a, c) {
		t.Fatal("another seed gave the same hosts")
	}
}

// Names are unique and valid, the fixed domains get about their share, and
// the distributions are skewed (a few values dominate).
func TestShape(t *testing.T) {
	const n = 20000
	hs := generate(t, n, 1)
	seen := map[string]bool{}
	perDomain := map[string]int{}
	ports := map[int]int{}
	for _, h := range hs {
		if seen[h.Host] {
			t.Fatalf("duplicate name %q", h.Host)
		}
		seen[h.Host] = true
		nm, err := host.Normalize(h.Host)
		if err != nil || nm.Host != h.Host {
			t.Fatalf("invalid name %q: %v", h.Host, err)
		}
		perDomain[nm.Domain]++
		if h.LastSeen < h.FirstSeen || h.LastSeen > 1795000000 || h.IPAddress == "" {
			t.Fatalf("bad host %+v", h)
		}
		for _, s := range h.NetworkServices {
			ports[s.Port]++
		}
	}
	for _, d := range Domains {
		got := float64(perDomain[d.Name]) / n
		if got < d.Share*0.8 || got > d.Share*1.2 {
			t.Errorf("%s holds %.3f of the hosts, want about %.3f", d.Name, got, d.Share)
		}
	}
	if ports[443] < 10*ports[3306] || ports[3306] == 0 {
		t.Errorf("port distribution not skewed: 443=%d 3306=%d", ports[443], ports[3306])
	}
	if len(perDomain) < n/20 {
		t.Errorf("only %d domains", len(perDomain))
	}
}
