package vuln

import "embed"

// Samples holds the recorded real feed samples of testdata (see
// testdata/README.md for each file's source and licence): NVD CVE API 2.0
// responses, the CISA KEV catalog, an EPSS slice, an Exploit-DB index in
// the current layout (authored, as the real index is GPL) and OSV records
// from the Go vulnerability database and the GitHub Advisory Database.
// `serve --demo` loads them so every route has real records to return.
//
//go:embed testdata/nvd/*.json testdata/kev/*.json testdata/epss/*.csv testdata/exploitdb/*.csv testdata/osv/go/*.json testdata/osv/ghsa/*.json testdata/README.md
var Samples embed.FS
