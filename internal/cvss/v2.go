package cvss

var v2Spec = newSpec(V2, []metricDef{
	{name: "AV", values: []string{"L", "A", "N"}, mandatory: true},
	{name: "AC", values: []string{"H", "M", "L"}, mandatory: true},
	{name: "Au", values: []string{"M", "S", "N"}, mandatory: true},
	{name: "C", values: []string{"N", "P", "C"}, mandatory: true},
	{name: "I", values: []string{"N", "P", "C"}, mandatory: true},
	{name: "A", values: []string{"N", "P", "C"}, mandatory: true},
	{name: "E", values: []string{"U", "POC", "F", "H", "ND"}},
	{name: "RL", values: []string{"OF", "TF", "W", "U", "ND"}},
	{name: "RC", values: []string{"UC", "UR", "C", "ND"}},
	{name: "CDP", values: []string{"N", "L", "LM", "MH", "H", "ND"}},
	{name: "TD", values: []string{"N", "L", "M", "H", "ND"}},
	{name: "CR", values: []string{"L", "M", "H", "ND"}},
	{name: "IR", values: []string{"L", "M", "H", "ND"}},
	{name: "AR", values: []string{"L", "M", "H", "ND"}},
})

// v2BaseScore implements the CVSS v2 base equation (v2 guide, 3.2.1).
func (v Vector) v2BaseScore() float64 {
	// Weights are listed in the order of the values in v2Spec.
	av := v.weight(0, 0.395, 0.646, 1.0)
	ac := v.weight(1, 0.35, 0.61, 0.71)
	au := v.weight(2, 0.45, 0.56, 0.704)
	c := v.weight(3, 0, 0.275, 0.660)
	i := v.weight(4, 0, 0.275, 0.660)
	a := v.weight(5, 0, 0.275, 0.660)
	impact := 10.41 * (1 - (1-c)*(1-i)*(1-a))
	exploitability := 20 * av * ac * au
	if impact == 0 {
		return 0
	}
	return round1((0.6*impact + 0.4*exploitability - 1.5) * 1.176)
}
