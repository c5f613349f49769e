package hoststore

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// randomIDs returns n ascending ids from from, with gaps of 1 to step.
func randomIDs(r *rand.Rand, n int, from, step int64) []int64 {
	ids := make([]int64, 0, n)
	for id := from; len(ids) < n; id += 1 + r.Int64N(step) {
		ids = append(ids, id)
	}
	return ids
}

// Rows round-trip in both forms, the smaller one is chosen, and a corrupt
// row is an error.
func TestPostingRows(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + r.IntN(300)
		step := []int64{1, 2, 3, 9, 200, 1 << 20}[trial%6]
		ids := randomIDs(r, n, 1+r.Int64N(1000), step)
		blob := encodePostingIDs(ids)
		got, err := decodePostingIDs(nil, ids[0], len(ids), blob)
		if err != nil || !slices.Equal(got, ids) {
			t.Fatalf("trial %d: %v, %d ids back of %d", trial, err, len(got), len(ids))
		}
		if len(ids) > 1 && step <= 2 && blob[0] != postingBitmap {
			t.Errorf("trial %d: dense ids stored as gaps (%d bytes)", trial, len(blob))
		}
		if step >= 200 && len(ids) > 1 && blob[0] != postingGaps {
			t.Errorf("trial %d: sparse ids stored as a bitmap", trial)
		}
		// The bitmap of any range holds exactly the ids in it.
		lo, hi := ids[0]+r.Int64N(50), ids[len(ids)-1]-r.Int64N(50)
		if lo > hi {
			continue
		}
		m := newIDBitmap(lo, hi)
		if len(blob) > 0 && blob[0] == postingBitmap {
			m.orRow(ids[0], blob[1:])
		} else {
			for _, id := range ids {
				m.set(id)
			}
		}
		var want []int64
		for _, id := range ids {
			if id >= lo && id <= hi {
				want = append(want, id)
			}
		}
		if got := m.ids(); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("trial %d: bitmap of [%d, %d] holds %d ids, want %d", trial, lo, hi, len(got), len(want))
		}
		if m.count() != len(want) {
			t.Fatalf("trial %d: count %d, want %d", trial, m.count(), len(want))
		}
		off, lim := r.IntN(len(want)+2), 1+r.IntN(70)
		wantPage := want[min(off, len(want)):min(off+lim, len(want))]
		if got := m.page(off, lim); !slices.Equal(got, wantPage) && len(got)+len(wantPage) > 0 {
			t.Fatalf("trial %d: page(%d, %d) = %v, want %v", trial, off, lim, got, wantPage)
		}
	}
	for _, bad := range []struct {
		n    int
		blob []byte
	}{{2, nil}, {2, []byte{postingGaps}}, {2, []byte{postingGaps, 0}}, {3, []byte{postingGaps, 1}},
		{2, []byte{postingBitmap, 0b10}}, {3, []byte{postingBitmap, 0b11}}, {2, []byte{9, 1}}, {1, []byte{1}}} {
		if _, err := decodePostingIDs(nil, 5, bad.n, bad.blob); err == nil {
			t.Errorf("corrupt row %d %x decoded", bad.n, bad.blob)
		}
	}
}

// Intersections of lists of any density agree with a plain set test.
func TestIntersectIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		a := randomIDs(r, r.IntN(500), 2, []int64{1, 3, 100}[trial%3])
		b := randomIDs(r, r.IntN(5000), 2, []int64{1, 2, 50}[trial/3%3])
		in := map[int64]bool{}
		for _, id := range a {
			in[id] = true
		}
		var want []int64
		for _, id := range b {
			if in[id] {
				want = append(want, id)
			}
		}
		if got := intersectIDs(a, b); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("trial %d: %d ids, want %d", trial, len(got), len(want))
		}
	}
}

// rowHoldsAny answers as decoding the row and looking would, in both row
// forms and for a row of one id.
func TestRowHoldsAny(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 2000 {
		n := 1 + r.IntN(40)
		step := []int64{1, 2, 50, 1 << 16}[trial%4]
		ids := randomIDs(r, n, 1+r.Int64N(100), step)
		last := ids[len(ids)-1]
		blob := encodePostingIDs(ids)
		var probe []int64
		for range r.IntN(6) {
			if r.IntN(2) == 0 {
				probe = append(probe, ids[r.IntN(len(ids))])
			} else {
				probe = append(probe, 1+r.Int64N(last+10))
			}
		}
		probe = sortIDs(probe)
		want := false
		for _, p := range probe {
			if slices.Contains(ids, p) {
				want = true
			}
		}
		got, err := rowHoldsAny(ids[0], len(ids), blob, probe)
		if err != nil || got != want {
			t.Fatalf("row %v (form %d), ids %v: %v, %v; want %v", ids, blob[0:min(1, len(blob))], probe, got, err, want)
		}
	}
}
