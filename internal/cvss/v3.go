package cvss

import "math"

func v3Metrics() []metricDef {
	return []metricDef{
		{name: "AV", values: []string{"N", "A", "L", "P"}, mandatory: true},
		{name: "AC", values: []string{"L", "H"}, mandatory: true},
		{name: "PR", values: []string{"N", "L", "H"}, mandatory: true},
		{name: "UI", values: []string{"N", "R"}, mandatory: true},
		{name: "S", values: []string{"U", "C"}, mandatory: true},
		{name: "C", values: []string{"H", "L", "N"}, mandatory: true},
		{name: "I", values: []string{"H", "L", "N"}, mandatory: true},
		{name: "A", values: []string{"H", "L", "N"}, mandatory: true},
		{name: "E", values: []string{"X", "H", "F", "P", "U"}},
		{name: "RL", values: []string{"X", "U", "W", "T", "O"}},
		{name: "RC", values: []string{"X", "C", "R", "U"}},
		{name: "CR", values: []string{"X", "H", "M", "L"}},
		{name: "IR", values: []string{"X", "H", "M", "L"}},
		{name: "AR", values: []string{"X", "H", "M", "L"}},
		{name: "MAV", values: []string{"X", "N", "A", "L", "P"}},
		{name: "MAC", values: []string{"X", "L", "H"}},
		{name: "MPR", values: []string{"X", "N", "L", "H"}},
		{name: "MUI", values: []string{"X", "N", "R"}},
		{name: "MS", values: []string{"X", "U", "C"}},
		{name: "MC", values: []string{"X", "H", "L", "N"}},
		{name: "MI", values: []string{"X", "H", "L", "N"}},
		{name: "MA", values: []string{"X", "H", "L", "N"}},
	}
}

var (
	v30Spec = newSpec(V30, v3Metrics())
	v31Spec = newSpec(V31, v3Metrics())
)

// v3BaseScore implements the CVSS v3.0 / v3.1 base equations (v3.1
// specification, 7.1); the two versions differ only in Roundup.
func (v Vector) v3BaseScore() float64 {
	// Indices and weights follow the order of v3Metrics and its values.
	changed := v.vals[4] == 2 // S:C
	av := v.weight(0, 0.85, 0.62, 0.55, 0.2)
	ac := v.weight(1, 0.77, 0.44)
	pr := v.weight(2, 0.85, 0.62, 0.27)
	if changed {
		pr = v.weight(2, 0.85, 0.68, 0.5)
	}
	ui := v.weight(3, 0.85, 0.62)
	c := v.weight(5, 0.56, 0.22, 0)
	i := v.weight(6, 0.56, 0.22, 0)
	a := v.weight(7, 0.56, 0.22, 0)
	iss := 1 - (1-c)*(1-i)*(1-a)
	var impact float64
	if changed {
		impact = 7.52*(iss-0.029) - 3.25*math.Pow(iss-0.02, 15)
	} else {
		impact = 6.42 * iss
	}
	if impact <= 0 {
		return 0
	}
	exploitability := 8.22 * av * ac * pr * ui
	roundup := roundup31
	if v.spec.version == V30 {
		roundup = roundup30
	}
	if changed {
		return roundup(math.Min(1.08*(impact+exploitability), 10))
	}
	return roundup(math.Min(impact+exploitability, 10))
}

// roundup30 is CVSS v3.0's Roundup: the smallest number, to one decimal
// place, that is equal to or higher than its input.
func roundup30(x float64) float64 {
	return math.Ceil(x*10) / 10
}

// roundup31 is CVSS v3.1's Roundup (specification Appendix A), which
// works on integers to avoid floating-point artefacts.
func roundup31(x float64) float64 {
	i := int64(math.Round(x * 100000))
	if i%10000 == 0 {
		return float64(i) / 100000
	}
	return float64(i/10000+1) / 10
}
