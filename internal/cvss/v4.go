package cvss

import (
	"math"
	"strings"
)

// effective returns the value the v4.0 equations use for a metric: the
// modified (environmental) value when one is set, and the worst case for
// E, CR, IR and AR when they are not defined (specification 8.2).
func (v Vector) effective(metric string) string {
	switch metric {
	case "E":
		if s := v.get("E"); s != "X" {
			return s
		}
		return "A"
	case "CR", "IR", "AR":
		if s := v.get(metric); s != "X" {
			return s
		}
		return "H"
	}
	if s := v.get("M" + metric); s != "X" {
		return s
	}
	return v.get(metric)
}

// macroVector returns the six equivalence-class digits EQ1..EQ6
// (specification 8.2, Table 24).
func (v Vector) macroVector(e func(string) string) [6]int {
	var eq [6]int
	av, pr, ui := e("AV"), e("PR"), e("UI")
	switch {
	case av == "N" && pr == "N" && ui == "N":
		eq[0] = 0
	case (av == "N" || pr == "N" || ui == "N") && av != "P":
		eq[0] = 1
	default:
		eq[0] = 2
	}
	if !(e("AC") == "L" && e("AT") == "N") {
		eq[1] = 1
	}
	vc, vi, va := e("VC"), e("VI"), e("VA")
	switch {
	case vc == "H" && vi == "H":
		eq[2] = 0
	case vc == "H" || vi == "H" || va == "H":
		eq[2] = 1
	default:
		eq[2] = 2
	}
	// MSI/MSA "S" (safety) only exists as a modified value.
	switch {
	case v.get("MSI") == "S" || v.get("MSA") == "S":
		eq[3] = 0
	case e("SC") == "H" || e("SI") == "H" || e("SA") == "H":
		eq[3] = 1
	default:
		eq[3] = 2
	}
	switch e("E") {
	case "A":
		eq[4] = 0
	case "P":
		eq[4] = 1
	default:
		eq[4] = 2
	}
	if !((e("CR") == "H" && vc == "H") || (e("IR") == "H" && vi == "H") || (e("AR") == "H" && va == "H")) {
		eq[5] = 1
	}
	return eq
}

// v4Levels gives each metric value's severity level used to measure the
// distance of a vector from the highest-severity vectors of its
// macro-vector.
var v4Levels = map[string]map[string]float64{
	"AV": {"N": 0.0, "A": 0.1, "L": 0.2, "P": 0.3},
	"PR": {"N": 0.0, "L": 0.1, "H": 0.2},
	"UI": {"N": 0.0, "P": 0.1, "A": 0.2},
	"AC": {"L": 0.0, "H": 0.1},
	"AT": {"N": 0.0, "P": 0.1},
	"VC": {"H": 0.0, "L": 0.1, "N": 0.2},
	"VI": {"H": 0.0, "L": 0.1, "N": 0.2},
	"VA": {"H": 0.0, "L": 0.1, "N": 0.2},
	"SC": {"H": 0.1, "L": 0.2, "N": 0.3},
	"SI": {"S": 0.0, "H": 0.1, "L": 0.2, "N": 0.3},
	"SA": {"S": 0.0, "H": 0.1, "L": 0.2, "N": 0.3},
	"CR": {"H": 0.0, "M": 0.1, "L": 0.2},
	"IR": {"H": 0.0, "M": 0.1, "L": 0.2},
	"AR": {"H": 0.0, "M": 0.1, "L": 0.2},
}

// v4DistanceMetrics lists the metrics whose severity distance is measured,
// grouped by the equivalence set they contribute to.
var v4DistanceMetrics = [...]struct {
	name string
	eq   int // 0: EQ1, 1: EQ2, 2: EQ3+EQ6, 3: EQ4
}{
	{"AV", 0}, {"PR", 0}, {"UI", 0},
	{"AC", 1}, {"AT", 1},
	{"VC", 2}, {"VI", 2}, {"VA", 2}, {"CR", 2}, {"IR", 2}, {"AR", 2},
	{"SC", 3}, {"SI", 3}, {"SA", 3},
}

// v4Score implements the CVSS v4.0 scoring algorithm (specification 8.2):
// the score of the vector's macro-vector, from the lookup table, lowered by
// the mean of the proportional distances from the macro-vector's highest
// severity vectors towards the next lower macro-vectors.
func (v Vector) v4Score() float64 {
	// Resolve effective values once; the equations read them many times.
	eff := make(map[string]string, 16)
	e := func(m string) string {
		if s, ok := eff[m]; ok {
			return s
		}
		s := v.effective(m)
		eff[m] = s
		return s
	}
	if e("VC") == "N" && e("VI") == "N" && e("VA") == "N" && e("SC") == "N" && e("SI") == "N" && e("SA") == "N" {
		return 0
	}
	eq := v.macroVector(e)
	value := v4Lookup(eq)

	lower := func(d [6]int) float64 {
		n := eq
		for i := range n {
			n[i] += d[i]
		}
		return v4Lookup(n)
	}
	nextEQ1 := lower([6]int{1, 0, 0, 0, 0, 0})
	nextEQ2 := lower([6]int{0, 1, 0, 0, 0, 0})
	var nextEQ3EQ6 float64
	switch {
	case eq[2] == 1 && eq[5] == 1, eq[2] == 0 && eq[5] == 1:
		nextEQ3EQ6 = lower([6]int{0, 0, 1, 0, 0, 0})
	case eq[2] == 1 && eq[5] == 0:
		nextEQ3EQ6 = lower([6]int{0, 0, 0, 0, 0, 1})
	case eq[2] == 0 && eq[5] == 0:
		// Two paths lead down (00 -> 01 and 00 -> 10): take the higher.
		left := lower([6]int{0, 0, 0, 0, 0, 1})
		right := lower([6]int{0, 0, 1, 0, 0, 0})
		nextEQ3EQ6 = right
		if left > right {
			nextEQ3EQ6 = left
		}
	default:
		nextEQ3EQ6 = math.NaN() // 21 -> 32 does not exist
	}
	nextEQ4 := lower([6]int{0, 0, 0, 1, 0, 0})
	nextEQ5 := lower([6]int{0, 0, 0, 0, 1, 0})

	// Find the first highest-severity vector of the macro-vector that the
	// scored vector does not exceed, and the distance from it.
	var dist [4]float64
	for _, max := range v4MaxVectors(eq) {
		var d [4]float64
		ok := true
		for _, dm := range v4DistanceMetrics {
			lv := v4Levels[dm.name]
			delta := lv[e(dm.name)] - lv[max[dm.name]]
			if delta < 0 {
				ok = false
			}
			d[dm.eq] += delta
		}
		dist = d
		if ok {
			break
		}
	}

	const step = 0.1
	maxSeverity := [4]float64{
		v4MaxSeverityEQ1[eq[0]] * step,
		v4MaxSeverityEQ2[eq[1]] * step,
		v4MaxSeverityEQ3EQ6[eq[2]][eq[5]] * step,
		v4MaxSeverityEQ4[eq[3]] * step,
	}
	available := [5]float64{value - nextEQ1, value - nextEQ2, value - nextEQ3EQ6, value - nextEQ4, value - nextEQ5}
	n := 0
	var sum float64
	for i, a := range available {
		if math.IsNaN(a) {
			continue
		}
		n++
		if i < 4 { // EQ5's proportion is always 0
			sum += a * (dist[i] / maxSeverity[i])
		}
	}
	if n > 0 {
		value -= sum / float64(n)
	}
	value = math.Max(0, math.Min(10, value))
	return math.Round(value*10) / 10
}

// v4MaxVectors returns the highest-severity vectors of a macro-vector as
// metric->value maps, in the order the specification's reference
// implementation tries them.
func v4MaxVectors(eq [6]int) []map[string]string {
	var out []map[string]string
	for _, a := range v4MaxComposedEQ1[eq[0]] {
		for _, b := range v4MaxComposedEQ2[eq[1]] {
			for _, c := range v4MaxComposedEQ3EQ6[eq[2]][eq[5]] {
				for _, d := range v4MaxComposedEQ4[eq[3]] {
					m := make(map[string]string, 16)
					for _, part := range []string{a, b, c, d} {
						for _, kv := range strings.Split(part, "/") {
							k, val, _ := strings.Cut(kv, ":")
							m[k] = val
						}
					}
					out = append(out, m)
				}
			}
		}
	}
	return out
}

// v4Lookup returns the score of a macro-vector, or NaN when the
// macro-vector does not exist.
func v4Lookup(eq [6]int) float64 {
	for _, d := range eq {
		if d < 0 || d > 2 {
			return math.NaN()
		}
	}
	key := eq[0]*100000 + eq[1]*10000 + eq[2]*1000 + eq[3]*100 + eq[4]*10 + eq[5]
	if s, ok := v4MacroScores[key]; ok {
		return s
	}
	return math.NaN()
}

// get returns the value of a metric known to the version, or "X" (not
// defined) when it is absent.
func (v Vector) get(name string) string {
	if s, ok := v.Metric(name); ok {
		return s
	}
	return "X"
}

// round1 rounds half up to one decimal place. The small bias absorbs
// binary floating-point error (4.35 stored as 4.3499999...), which the
// reference calculator's rounding fix (FIRST, 2024) corrects the same way.
func round1(x float64) float64 {
	return math.Floor(x*10+0.5+1e-9) / 10
}
