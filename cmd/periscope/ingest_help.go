package main

import (
	"fmt"
	"strings"
)

// ingestKind is what `periscope ingest --help` says of a kind: what it
// reads, which tool or feed writes that, and one example line.
type ingestKind struct {
	name, reads, example string
}

// ingestKinds lists every kind of `periscope ingest` in the order the help
// shows them; a test holds it to ingesters().
var ingestKinds = []ingestKind{
	{"nvd", "NVD CVE API 2.0 JSON (an API page, a yearly or modified feed, .json or .json.gz)", "periscope ingest nvd nvdcve-2.0-modified.json.gz"},
	{"kev", "CISA Known Exploited Vulnerabilities catalogue (known_exploited_vulnerabilities.json)", "periscope ingest kev known_exploited_vulnerabilities.json"},
	{"epss", "FIRST EPSS scores (epss_scores-YYYY-MM-DD.csv or .csv.gz)", "periscope ingest epss epss_scores-2026-11-01.csv.gz"},
	{"exploitdb", "Exploit-DB files_exploits.csv (the legacy files.csv too)", "periscope ingest exploitdb files_exploits.csv"},
	{"osv", "OSV JSON files, directories of them, or an ecosystem's all.zip (GHSA in OSV form)", "periscope ingest osv ./osv/Go/"},
	{"httpx", "ProjectDiscovery httpx -json lines (with tlsx's tls object)", "periscope ingest httpx httpx.jsonl"},
	{"nmap", "nmap -oX XML, streamed", "periscope ingest nmap scan.xml"},
	{"masscan", "masscan -oJ or -oD output", "periscope ingest masscan masscan.json"},
	{"naabu", "ProjectDiscovery naabu -json lines", "periscope ingest naabu naabu.jsonl"},
	{"pdns", "passive DNS in Common Output Format NDJSON", "periscope ingest pdns pdns.jsonl"},
	{"hosts", "Periscope's native host objects (NDJSON), as `periscope export hosts` writes them", "periscope ingest hosts hosts.ndjson"},
	{"certs", "X.509 certificates, PEM or DER, files or directories", "periscope ingest certs ./certs/ leaf.pem"},
	{"ct", "an RFC 6962 Certificate Transparency log, from its stored checkpoint to the tree head", "periscope ingest ct https://ct.example/logs/2026h1/"},
	{"certstream", "certstream JSON messages, one a line (- for standard input)", "periscope ingest certstream certstream.ndjson"},
	{"zone", "an RFC 1035 zone file, plain or gzip", "periscope ingest zone com.zone.gz"},
	{"tor-exits", "the Tor Project's exit lists (exit-addresses or the bulk exit list), for /nexus/tor/check-ip", "periscope ingest tor-exits exit-addresses"},
	{"whois", "recorded raw WHOIS answers (.txt) and RDAP JSON (.json), files or directories", "periscope ingest whois ./whois/"},
	{"combolist", "email:password or user:password lines (--breach NAME required)", "periscope ingest combolist combo.txt --breach ExampleCombo"},
	{"breach-csv", "a breach dump as CSV, columns found by name or --map col=field", "periscope ingest breach-csv dump.csv --breach SampleShop"},
	{"dehashed", "DeHashed API answers: v1 {\"entries\":[…]}, a JSON array, or NDJSON", "periscope ingest dehashed export.json"},
	{"stealer", "stealer-log folders (Passwords.txt with System.txt or UserInformation.txt)", "periscope ingest stealer ./logs/"},
	{"breaches", "a breach catalogue in Have I Been Pwned's breach shape (JSON)", "periscope ingest breaches breaches.json"},
}

// ingestUsage is the help of `periscope ingest`: every kind.
func ingestUsage() string {
	var b strings.Builder
	b.WriteString(`usage: periscope ingest KIND FILE|DIR|URL... [flags]

Loads files (or directories of them, or URLs) of one kind into the database
(created when it does not exist) and prints a summary. "periscope ingest
KIND --help" shows the flags of a kind. The kinds:

`)
	for _, k := range ingestKinds {
		fmt.Fprintf(&b, "  %-11s %s\n  %-11s e.g. %s\n", k.name, k.reads, "", k.example)
	}
	b.WriteString("\nMore in docs/ingest.md.\n")
	return b.String()
}

// ingestKindUsage is the help of `periscope ingest KIND`.
func ingestKindUsage(kind string) string {
	for _, k := range ingestKinds {
		if k.name == kind {
			return fmt.Sprintf("usage: periscope ingest %s FILE|DIR|URL... [flags]\n\nReads %s.\nExample: %s\n", k.name, k.reads, k.example)
		}
	}
	return fmt.Sprintf("usage: periscope ingest %s FILE|DIR|URL... [flags]\n", kind)
}
