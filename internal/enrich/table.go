package enrich

import (
	"cmp"
	"net/netip"
	"slices"
)

// Table is an immutable longest-prefix-match table over IPv4 and IPv6.
// Prefixes are flattened at build time into sorted, non-overlapping address
// intervals, each pointing at the Info of the most specific prefix that
// covers it, so a lookup is one binary search. A Table is safe for
// concurrent use.
type Table struct {
	v4       []span4
	v6       []span6
	infos    []Info
	prefixes int
}

type span4 struct {
	lo, hi uint32
	info   uint32
}

type span6 struct {
	lo, hi u128
	info   uint32
}

// u128 is an IPv6 address as a number.
type u128 struct{ hi, lo uint64 }

func (a u128) cmp(b u128) int {
	if c := cmp.Compare(a.hi, b.hi); c != 0 {
		return c
	}
	return cmp.Compare(a.lo, b.lo)
}

func (a u128) add1() (u128, bool) {
	lo := a.lo + 1
	hi := a.hi
	if lo == 0 {
		hi++
		if hi == 0 {
			return u128{}, true
		}
	}
	return u128{hi, lo}, false
}

func (a u128) sub1() u128 {
	if a.lo == 0 {
		return u128{a.hi - 1, ^uint64(0)}
	}
	return u128{a.hi, a.lo - 1}
}

func addrU128(a netip.Addr) u128 {
	b := a.As16()
	return u128{beUint64(b[:8]), beUint64(b[8:])}
}

func beUint64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// bounds returns the first and last address of p, with IPv4 addresses in
// the low 32 bits.
func bounds(p netip.Prefix) (lo, hi u128) {
	if p.Addr().Is4() {
		b := p.Addr().As4()
		v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		host := uint32(0)
		if p.Bits() < 32 {
			host = ^uint32(0) >> p.Bits()
		}
		return u128{0, uint64(v)}, u128{0, uint64(v | host)}
	}
	lo = addrU128(p.Addr())
	bits := p.Bits()
	var maskHi, maskLo uint64
	switch {
	case bits == 0:
		maskHi, maskLo = ^uint64(0), ^uint64(0)
	case bits < 64:
		maskHi, maskLo = ^uint64(0)>>bits, ^uint64(0)
	case bits < 128:
		maskLo = ^uint64(0) >> (bits - 64)
	}
	return lo, u128{lo.hi | maskHi, lo.lo | maskLo}
}

// item is a prefix during the build; its Info is interned to keep the
// sorted slice small.
type item struct {
	lo, hi   u128
	info     uint32
	priority int32
	order    int32
}

// NewTable builds a table from ranges. Where prefixes nest, the longest
// wins; for identical prefixes, the higher Priority wins and then the
// earlier range. A more specific prefix of the same provider inherits the
// enclosing prefix's region and service when it has none, and its kinds
// when it has a lower priority, so a bare compiled list does not erase
// what the provider's own file says.
// Invalid prefixes are ignored.
func NewTable(ranges []Range) *Table {
	t := &Table{}
	intern := map[Info]uint32{}
	index := func(in Info) uint32 {
		if i, ok := intern[in]; ok {
			return i
		}
		i := uint32(len(t.infos))
		t.infos = append(t.infos, in)
		intern[in] = i
		return i
	}
	var v4, v6 []item
	for i, r := range ranges {
		if !r.Prefix.IsValid() {
			continue
		}
		p := r.Prefix.Masked()
		lo, hi := bounds(p)
		it := item{lo: lo, hi: hi, info: index(r.Info), priority: int32(r.Priority), order: int32(i)}
		if p.Addr().Is4() {
			v4 = append(v4, it)
		} else {
			v6 = append(v6, it)
		}
	}
	t.prefixes = len(v4) + len(v6)
	for _, s := range t.flatten(v4, index) {
		t.v4 = append(t.v4, span4{lo: uint32(s.lo.lo), hi: uint32(s.hi.lo), info: s.info})
	}
	t.v6 = t.flatten(v6, index)
	return t
}

// flatten turns nested prefixes into disjoint intervals.
func (t *Table) flatten(items []item, index func(Info) uint32) []span6 {
	slices.SortFunc(items, func(a, b item) int {
		if c := a.lo.cmp(b.lo); c != 0 {
			return c
		}
		if c := b.hi.cmp(a.hi); c != 0 { // enclosing prefix first
			return c
		}
		if c := cmp.Compare(b.priority, a.priority); c != 0 {
			return c
		}
		return cmp.Compare(a.order, b.order)
	})
	items = slices.CompactFunc(items, func(a, b item) bool { return a.lo == b.lo && a.hi == b.hi })

	var out []span6
	emit := func(lo, hi u128, id uint32) {
		if n := len(out); n > 0 && out[n-1].info == id {
			if next, _ := out[n-1].hi.add1(); next == lo {
				out[n-1].hi = hi
				return
			}
		}
		out = append(out, span6{lo: lo, hi: hi, info: id})
	}

	var stack []item
	var cursor u128 // first address not yet emitted inside the stack top
	done := false   // cursor ran past the last address
	pop := func() {
		top := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		// When a child already ended at top.hi the cursor is past it.
		if !done && cursor.cmp(top.hi) <= 0 {
			emit(cursor, top.hi, top.info)
			cursor, done = top.hi.add1()
		}
	}
	for _, it := range items {
		for len(stack) > 0 && stack[len(stack)-1].hi.cmp(it.lo) < 0 {
			pop()
		}
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			if !done && cursor.cmp(it.lo) < 0 {
				emit(cursor, it.lo.sub1(), top.info)
			}
			if in, parent := t.infos[it.info], t.infos[top.info]; in.Provider == parent.Provider {
				// Kinds flow only from a more trusted source: Google's
				// compiled "cdn" list covers its whole address space and
				// must not make every cloud region a CDN.
				if it.priority < top.priority {
					in.Kind |= parent.Kind
				}
				if in.Region == "" {
					in.Region = parent.Region
				}
				if in.Service == "" {
					in.Service = parent.Service
				}
				it.info = index(in)
			}
		}
		stack = append(stack, it)
		cursor, done = it.lo, false
	}
	for len(stack) > 0 {
		pop()
	}
	return out
}

// Lookup returns the operator of the most specific prefix containing ip.
func (t *Table) Lookup(ip netip.Addr) (Info, bool) {
	ip = ip.Unmap()
	if ip.Is4() {
		b := ip.As4()
		v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		// First span starting after v; the candidate is the one before.
		i, _ := slices.BinarySearchFunc(t.v4, v, func(s span4, v uint32) int {
			if s.lo <= v {
				return -1
			}
			return 1
		})
		if i > 0 && t.v4[i-1].hi >= v {
			return t.infos[t.v4[i-1].info], true
		}
		return Info{}, false
	}
	if !ip.Is6() {
		return Info{}, false
	}
	v := addrU128(ip)
	i, _ := slices.BinarySearchFunc(t.v6, v, func(s span6, v u128) int {
		if s.lo.cmp(v) <= 0 {
			return -1
		}
		return 1
	})
	if i > 0 && t.v6[i-1].hi.cmp(v) >= 0 {
		return t.infos[t.v6[i-1].info], true
	}
	return Info{}, false
}

// Stats reports the table's size: source prefixes, IPv4 and IPv6 intervals
// after flattening, and distinct Info values.
func (t *Table) Stats() (prefixes, v4Spans, v6Spans, infos int) {
	return t.prefixes, len(t.v4), len(t.v6), len(t.infos)
}
