package brand

// automaton is an Aho-Corasick automaton over the skeleton alphabet
// (a-z, 0-9, '-', '.'). Its transition table is dense, so scanning costs one
// table lookup per byte however many patterns it holds.
type automaton struct {
	next [][alphabet]int32 // goto function completed with failure links
	out  [][]int32         // pattern ids ending at each state
	lens []int             // byte length of each pattern
}

const alphabet = 38

func symbol(c byte) int {
	switch {
	case c >= 'a' && c <= 'z':
		return int(c - 'a')
	case c >= '0' && c <= '9':
		return 26 + int(c-'0')
	case c == '-':
		return 36
	case c == '.':
		return 37
	}
	return -1
}

// newAutomaton builds the automaton; patterns must use the skeleton
// alphabet only.
func newAutomaton(patterns []string) *automaton {
	a := &automaton{next: make([][alphabet]int32, 1), out: make([][]int32, 1)}
	for i := range a.next[0] {
		a.next[0][i] = -1
	}
	for id, p := range patterns {
		a.lens = append(a.lens, len(p))
		s := int32(0)
		for i := 0; i < len(p); i++ {
			c := symbol(p[i])
			if c < 0 {
				s = -1
				break
			}
			if a.next[s][c] < 0 {
				var row [alphabet]int32
				for j := range row {
					row[j] = -1
				}
				a.next = append(a.next, row)
				a.out = append(a.out, nil)
				a.next[s][c] = int32(len(a.next) - 1)
			}
			s = a.next[s][c]
		}
		if s > 0 {
			a.out[s] = append(a.out[s], int32(id))
		}
	}
	fail := make([]int32, len(a.next))
	queue := make([]int32, 0, len(a.next))
	for c := 0; c < alphabet; c++ {
		if t := a.next[0][c]; t < 0 {
			a.next[0][c] = 0
		} else {
			fail[t] = 0
			queue = append(queue, t)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		// Patterns ending at the failure state also end here.
		a.out[s] = append(a.out[s], a.out[fail[s]]...)
		for c := 0; c < alphabet; c++ {
			t := a.next[s][c]
			if t < 0 {
				a.next[s][c] = a.next[fail[s]][c]
				continue
			}
			fail[t] = a.next[fail[s]][c]
			queue = append(queue, t)
		}
	}
	return a
}

// scan calls hit with each pattern id and the byte offset just past its end.
// Bytes outside the alphabet reset the automaton.
func (a *automaton) scan(text []byte, hit func(id int32, end int)) {
	s := int32(0)
	for i := 0; i < len(text); i++ {
		c := symbol(text[i])
		if c < 0 {
			s = 0
			continue
		}
		s = a.next[s][c]
		for _, id := range a.out[s] {
			hit(id, i+1)
		}
	}
}
