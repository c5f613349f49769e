package hoststore

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func bitmapOf(ids ...uint32) *roaring.Bitmap { return roaring.BitmapOf(ids...) }

// The cache answers only for the generation its entries were read at, a
// newer generation drops them all, and it never holds more than its budget.
func TestPostingCacheGenerations(t *testing.T) {
	c := newPostingCache(1 << 20)
	c.putTerm(5, "port:22", bitmapOf(1, 2, 3))
	if ids, ok := c.term(5, "port:22"); !ok || ids.GetCardinality() != 3 {
		t.Fatalf("term at its generation: %v %v", ids, ok)
	}
	if _, ok := c.term(4, "port:22"); ok {
		t.Fatal("an older generation answered from the cache")
	}
	if _, ok := c.term(6, "port:22"); ok {
		t.Fatal("a newer generation answered from the cache")
	}
	if _, ok := c.term(5, "port:22"); ok {
		t.Fatal("an entry outlived a newer generation")
	}
	// An entry read at an older generation than the cache's is not kept.
	c.putTerm(5, "port:80", bitmapOf(1))
	if _, ok := c.term(6, "port:80"); ok || len(c.terms) != 0 {
		t.Fatal("an entry of an older generation was stored")
	}

	// A field answers for each of its terms, a missing value as no host,
	// and replaces the terms of the field held alone.
	c.putTerm(6, "port:443", bitmapOf(7))
	c.putField(6, "port", map[string]*roaring.Bitmap{"22": bitmapOf(1, 9)}, 1000)
	if ids, ok := c.term(6, "port:22"); !ok || ids.GetCardinality() != 2 {
		t.Fatalf("port:22 from its field: %v %v", ids, ok)
	}
	if ids, ok := c.term(6, "port:443"); !ok || !ids.IsEmpty() {
		t.Fatalf("port:443, not in the field: %v %v", ids, ok)
	}
	if len(c.terms) != 0 || c.used != 1000 {
		t.Fatalf("%d terms left beside their field, %d bytes used", len(c.terms), c.used)
	}
}

func TestPostingCacheBudget(t *testing.T) {
	c := newPostingCache(10000)
	field := func(n int64) map[string]*roaring.Bitmap { return map[string]*roaring.Bitmap{"x": bitmapOf(uint32(n))} }
	c.putField(1, "a", field(1), 4000)
	c.putField(1, "b", field(2), 4000)
	c.field(1, "a") // a is now the more recent
	c.putField(1, "c", field(3), 4000)
	if _, ok := c.field(1, "b"); ok {
		t.Error("the least recently used field was kept")
	}
	for _, f := range []string{"a", "c"} {
		if _, ok := c.field(1, f); !ok {
			t.Errorf("field %s evicted", f)
		}
	}
	c.putField(1, "huge", field(4), 10001)
	if _, ok := c.field(1, "huge"); ok {
		t.Error("a field over the budget was stored")
	}
	if _, ok := c.field(1, "a"); !ok {
		t.Error("a field too big to keep evicted the others")
	}
	for i := range 100 {
		c.putTerm(1, fmt.Sprintf("tag:t%d", i), bitmapOf(uint32(i)))
		if c.used > c.budget {
			t.Fatalf("%d bytes used over a budget of %d", c.used, c.budget)
		}
	}
	off := newPostingCache(0)
	off.putTerm(1, "port:22", bitmapOf(1))
	if _, ok := off.term(1, "port:22"); ok {
		t.Error("a cache without a budget answered")
	}
}

// A field over the limit is given up while it is built, not after.
func TestFieldBuilderLimit(t *testing.T) {
	b := newFieldBuilder(1 << 20)
	for v := range 3 {
		ids := []int64{int64(v + 1), int64(v + 100), int64(v + 5000)}
		if err := b.add(fmt.Sprint(v), ids[0], len(ids), encodePostingIDs(ids)); err != nil {
			t.Fatal(err)
		}
	}
	values, _, ok := b.done()
	if !ok || len(values) != 3 || !slices.Equal(values["1"].ToArray(), []uint32{2, 101, 5001}) {
		t.Fatalf("built %v (%v)", values, ok)
	}
	small := newFieldBuilder(300)
	for v := range 50 {
		small.add(fmt.Sprint(v), int64(v+1), 1, []byte{})
	}
	if _, _, ok := small.done(); ok || small.values != nil {
		t.Fatal("a field over its limit was kept")
	}
}

// FuzzIDSetRoaring: an id set turned into a roaring bitmap and back holds
// the same ids, and AND-cardinality with another set counts what the word
// bitmaps' AND does.
func FuzzIDSetRoaring(f *testing.F) {
	f.Add([]byte{1, 0, 2, 0, 255, 255}, []byte{2, 0})
	f.Add([]byte{}, []byte{0, 1})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		const hi = 1 << 18
		set := func(raw []byte) *idBitmap {
			m := newIDBitmap(0, hi)
			for len(raw) >= 3 {
				m.set(int64(binary.LittleEndian.Uint32(append(raw[:3:3], 0))) % (hi + 1))
				raw = raw[3:]
			}
			return m
		}
		x, y := set(a), set(b)
		rx := roaringOf(x, false)
		back, ok := setOf(rx, hi)
		if !ok || !slices.Equal(back.words, x.words) {
			t.Fatal("the round trip changed the set")
		}
		if _, ok := setOf(bitmapOf(hi+1), hi); ok {
			t.Fatal("an id above the range was taken")
		}
		z := x.clone()
		z.and(y)
		if got := roaringOf(y, true).AndCardinality(rx); int(got) != z.count() {
			t.Fatalf("AND-cardinality %d, want %d", got, z.count())
		}
	})
}

// topValues answers what counting every value and sorting answers. The
// values are few hosts each over a small range, so whole values match
// and counts tie with cardinalities: a value holding exactly the n-th
// count must still be counted, since it may come first by value.
func TestTopValues(t *testing.T) {
	// z is counted first (most hosts) and is the first value so far with
	// 2; a holds just 2 hosts, both matching, and comes before z.
	ranked := rankValues(map[string]*roaring.Bitmap{"z": bitmapOf(1, 2, 3, 4, 5), "a": bitmapOf(6, 7), "b": bitmapOf(8)})
	got := topValues(ranked, bitmapOf(1, 2, 6, 7, 8), nil, 1)
	if want := []FacetValue{{"a", 2}}; !slices.Equal(got, want) {
		t.Fatalf("top 1: %v, want %v", got, want)
	}

	r := rand.New(rand.NewPCG(5, 9))
	for range 2000 {
		values := map[string]*roaring.Bitmap{}
		for v := range 1 + r.IntN(8) {
			ids := roaring.New()
			for range r.IntN(6) {
				ids.Add(uint32(r.IntN(24)))
			}
			values[string(rune('a'+r.IntN(12)))+fmt.Sprint(v%2)] = ids
		}
		matches := roaring.New()
		for range r.IntN(24) {
			matches.Add(uint32(r.IntN(24)))
		}
		var want []FacetValue
		for v, ids := range values {
			if c := int(ids.AndCardinality(matches)); c > 0 {
				want = append(want, FacetValue{v, c})
			}
		}
		slices.SortFunc(want, compareFacetValues)
		ranked := rankValues(values)
		// With dense words for every value (hi 23: each value holds at
		// least one of the 24 ids, a denseShare-th of them), counted
		// against the matches' own words.
		dense := newCachedField(values, 0, 23).ranked
		words := make([]uint64, 1)
		matches.WriteDenseTo(words)
		for n := 1; n <= len(values)+1; n++ {
			got := topValues(ranked, matches, nil, n)
			if w := want[:min(n, len(want))]; !slices.Equal(got, w) {
				t.Fatalf("top %d of %v over %v: %v, want %v", n, values, matches, got, w)
			}
			if got := topValues(dense, matches, words, n); !slices.Equal(got, want[:min(n, len(want))]) {
				t.Fatalf("top %d of %v over %v on dense words: %v, want %v", n, values, matches, got, want[:min(n, len(want))])
			}
		}
	}
}
