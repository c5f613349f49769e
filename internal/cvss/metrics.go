package cvss

// The metric tables of each version, in specification order (the order
// String writes them in), with the values each metric accepts.

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

var v4Spec = newSpec(V40, []metricDef{
	// Base
	{name: "AV", values: []string{"N", "A", "L", "P"}, mandatory: true},
	{name: "AC", values: []string{"L", "H"}, mandatory: true},
	{name: "AT", values: []string{"N", "P"}, mandatory: true},
	{name: "PR", values: []string{"N", "L", "H"}, mandatory: true},
	{name: "UI", values: []string{"N", "P", "A"}, mandatory: true},
	{name: "VC", values: []string{"H", "L", "N"}, mandatory: true},
	{name: "VI", values: []string{"H", "L", "N"}, mandatory: true},
	{name: "VA", values: []string{"H", "L", "N"}, mandatory: true},
	{name: "SC", values: []string{"H", "L", "N"}, mandatory: true},
	{name: "SI", values: []string{"H", "L", "N"}, mandatory: true},
	{name: "SA", values: []string{"H", "L", "N"}, mandatory: true},
	// Threat
	{name: "E", values: []string{"X", "A", "P", "U"}},
	// Environmental
	{name: "CR", values: []string{"X", "H", "M", "L"}},
	{name: "IR", values: []string{"X", "H", "M", "L"}},
	{name: "AR", values: []string{"X", "H", "M", "L"}},
	{name: "MAV", values: []string{"X", "N", "A", "L", "P"}},
	{name: "MAC", values: []string{"X", "L", "H"}},
	{name: "MAT", values: []string{"X", "N", "P"}},
	{name: "MPR", values: []string{"X", "N", "L", "H"}},
	{name: "MUI", values: []string{"X", "N", "P", "A"}},
	{name: "MVC", values: []string{"X", "H", "L", "N"}},
	{name: "MVI", values: []string{"X", "H", "L", "N"}},
	{name: "MVA", values: []string{"X", "H", "L", "N"}},
	{name: "MSC", values: []string{"X", "H", "L", "N"}},
	{name: "MSI", values: []string{"X", "S", "H", "L", "N"}},
	{name: "MSA", values: []string{"X", "S", "H", "L", "N"}},
	// Supplemental (no effect on the score)
	{name: "S", values: []string{"X", "N", "P"}},
	{name: "AU", values: []string{"X", "N", "Y"}},
	{name: "R", values: []string{"X", "A", "U", "I"}},
	{name: "V", values: []string{"X", "D", "C"}},
	{name: "RE", values: []string{"X", "L", "M", "H"}},
	{name: "U", values: []string{"X", "Clear", "Green", "Amber", "Red"}},
})
