package brand

import (
	"fmt"
	"testing"
	"time"
)

var syllables = []string{"ka", "lo", "mi", "ra", "ven", "tor", "sel", "dun", "par", "qui", "zeb", "nox", "fil", "gar", "hos", "jet", "lum", "orb", "pex", "tri"}

// benchBrands returns n deterministic brand domains such as "kalomi.com".
func benchBrands(n int) []Brand {
	brands := make([]Brand, n)
	tlds := []string{"com", "net", "io", "co.uk", "de"}
	for i := range brands {
		a, b, c := syllables[i%20], syllables[(i/20)%20], syllables[(i/400)%20]
		brands[i] = Brand{Domain: a + b + c + "bra." + tlds[i%len(tlds)]}
	}
	return brands
}

// benchNames returns n observed names: 70% unrelated, 15% phishing-style
// uses of a brand label, 15% one-keystroke typos of a brand.
func benchNames(n int, brands []Brand) []string {
	names := make([]string, n)
	for i := range names {
		b := brands[(i*7919)%len(brands)]
		label := b.Domain[:len(b.Domain)-len(".com")]
		switch i % 20 {
		case 0, 1, 2:
			names[i] = fmt.Sprintf("%s-login.secure-%d.xyz", label, i)
		case 3, 4, 5:
			names[i] = label[:2] + label[3:] + ".com" // omission
		default:
			names[i] = fmt.Sprintf("www.%s%s-%d.example.net", syllables[i%17], syllables[(i/17)%19], i)
		}
	}
	return names
}

// BenchmarkMatch1000Brands reports how many names per second one goroutine
// classifies against 1,000 brands (default options: all fuzzers, no
// dictionary or suffix list, about 1.6 million candidates indexed).
func BenchmarkMatch1000Brands(b *testing.B) {
	brands := benchBrands(1000)
	start := time.Now()
	m, err := New(brands, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("built matcher for %d brands, %d candidates, in %v", len(brands), len(m.index), time.Since(start))
	names := benchNames(10000, brands)
	b.ReportAllocs()
	b.ResetTimer()
	hits := 0
	i := 0
	for b.Loop() {
		got, err := m.Match(names[i%len(names)])
		if err != nil {
			b.Fatal(err)
		}
		hits += len(got)
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "names/s")
	if hits == 0 {
		b.Fatal("no matches in the benchmark corpus")
	}
}

// BenchmarkWith measures adding one brand to a 1,000-brand matcher.
func BenchmarkWith(b *testing.B) {
	m, err := New(benchBrands(1000), Options{})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.With(Brand{Domain: "newbrand.com"}); err != nil {
			b.Fatal(err)
		}
	}
}
