package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// The documentation examples: every curl command in a shell block of
// README.md and docs/**/*.md, run against a real serve --demo. The
// conventions (variables, markers) are documented in docs/design/README.md
// "Documentation examples"; this file is their only reader.

// docRoot is the repository root, seen from this package's directory.
const docRoot = "../.."

// docExample is one curl command of the documentation.
type docExample struct {
	file   string // relative to the repository root
	line   int    // of the command's first line
	cmd    string // as written, continuation lines joined
	expect string // "" (2xx, not empty), "empty" (2xx), or a status code
}

// docMarker is the HTML comment that may precede a shell block.
var docMarker = regexp.MustCompile(`^<!--\s*examples:\s*(skip|empty|status)\b\s*:?\s*(.*?)\s*-->$`)

// docFiles lists README.md and every Markdown file under docs/, in the
// order the examples run: the README first, then docs by path.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	var docs []string
	err := filepath.WalkDir(filepath.Join(docRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(docRoot, p)
			docs = append(docs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list docs: %v", err)
	}
	sort.Strings(docs)
	return append(files, docs...)
}

// docExamples extracts the curl commands of one Markdown file. A marker
// line right before a block (blank lines between allowed) applies to the
// whole block; an unknown marker, or one not followed by a block, is an
// error.
func docExamples(file string, text []byte) ([]docExample, error) {
	var out []docExample
	lines := strings.Split(string(text), "\n")
	marker, markerLine := "", 0
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "<!--") && strings.Contains(line, "examples:") {
			m := docMarker.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("%s:%d: unknown examples marker %q (skip: REASON, empty: REASON, status NNN)", file, i+1, line)
			}
			switch m[1] {
			case "skip", "empty":
				if m[2] == "" {
					return nil, fmt.Errorf("%s:%d: %s marker without a reason", file, i+1, m[1])
				}
				marker = m[1]
			case "status":
				if _, err := strconv.Atoi(m[2]); err != nil || len(m[2]) != 3 {
					return nil, fmt.Errorf("%s:%d: status marker wants a status code, got %q", file, i+1, m[2])
				}
				marker = m[2]
			}
			markerLine = i + 1
			continue
		}
		if !strings.HasPrefix(line, "```") {
			if line != "" && marker != "" {
				return nil, fmt.Errorf("%s:%d: examples marker not followed by a shell block", file, markerLine)
			}
			continue
		}
		lang := strings.TrimSpace(strings.TrimLeft(line, "`"))
		shell := lang == "sh" || lang == "bash" || lang == "shell"
		// The block runs to its closing fence.
		var block []docExample
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
			if !shell {
				continue
			}
			start := i
			cmd := strings.TrimSpace(lines[i])
			for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
				i++
				cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
			}
			if strings.HasPrefix(cmd, "curl ") {
				block = append(block, docExample{file: file, line: start + 1, cmd: cmd})
			}
		}
		if marker != "skip" {
			for _, e := range block {
				e.expect = marker
				out = append(out, e)
			}
		}
		marker = ""
	}
	return out, nil
}

// shellWords splits a command as sh would: single quotes literal, double
// quotes and bare words with $NAME and ${NAME} expanded from vars, a
// backslash escaping the next character outside single quotes; an
// unquoted # starting a word ends the command, and so do an unquoted | and
// > (what follows a pipe or a redirection only reformats or stores the
// answer).
func shellWords(cmd string, vars map[string]string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	expand := func(s string, i int) (int, error) {
		// s[i] == '$'
		j := i + 1
		var name string
		if j < len(s) && s[j] == '{' {
			k := strings.IndexByte(s[j:], '}')
			if k < 0 {
				return 0, fmt.Errorf("unclosed ${ in %q", s)
			}
			name, j = s[j+1:j+k], j+k+1
		} else {
			k := j
			for k < len(s) && (s[k] == '_' || s[k] >= 'A' && s[k] <= 'Z' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= '0' && s[k] <= '9') {
				k++
			}
			name, j = s[j:k], k
		}
		if name == "" {
			cur.WriteByte('$')
			return i + 1, nil
		}
		v, ok := vars[name]
		if !ok {
			known := make([]string, 0, len(vars))
			for k := range vars {
				known = append(known, "$"+k)
			}
			sort.Strings(known)
			return 0, fmt.Errorf("unknown variable $%s (the examples may use %s)", name, strings.Join(known, ", "))
		}
		cur.WriteString(v)
		return j, nil
	}
	for i := 0; i < len(cmd); {
		c := cmd[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case (c == '#' && !inWord) || c == '|' || c == '>':
			if inWord {
				words = append(words, cur.String())
			}
			return words, nil
		case c == '\'':
			k := strings.IndexByte(cmd[i+1:], '\'')
			if k < 0 {
				return nil, fmt.Errorf("unclosed ' in %q", cmd)
			}
			cur.WriteString(cmd[i+1 : i+1+k])
			inWord, i = true, i+k+2
		case c == '"':
			inWord = true
			i++
			for ; i < len(cmd) && cmd[i] != '"'; i++ {
				switch cmd[i] {
				case '\\':
					if i+1 < len(cmd) && strings.IndexByte("$`\"\\", cmd[i+1]) >= 0 {
						i++
					}
					cur.WriteByte(cmd[i])
				case '$':
					j, err := expand(cmd, i)
					if err != nil {
						return nil, err
					}
					i = j - 1
				default:
					cur.WriteByte(cmd[i])
				}
			}
			if i == len(cmd) {
				return nil, fmt.Errorf("unclosed \" in %q", cmd)
			}
			i++
		case c == '\\' && i+1 < len(cmd):
			cur.WriteByte(cmd[i+1])
			inWord, i = true, i+2
		case c == '$':
			j, err := expand(cmd, i)
			if err != nil {
				return nil, err
			}
			inWord, i = true, j
		default:
			cur.WriteByte(c)
			inWord = true
			i++
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// docRequest builds the request a documented curl command makes, as curl
// would: -H headers, -X method, -d body (POST, form content type, as curl
// sends it), the flags that only change what curl prints (-s, -S, -i, -v,
// -f and their combinations), and one URL, whose scheme and host are
// replaced by base (the examples name 127.0.0.1:8080, the test listens on
// :0). Any other option is an error, so an example never silently tests
// less than it shows.
func docRequest(words []string, base string) (*http.Request, error) {
	method, body, target := "", "", ""
	hasBody := false
	header := http.Header{}
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "-H" || w == "--header" || w == "-X" || w == "--request" || w == "-d" || w == "--data" || w == "--data-raw":
			if i+1 == len(words) {
				return nil, fmt.Errorf("%s without a value", w)
			}
			i++
			switch w {
			case "-H", "--header":
				k, v, ok := strings.Cut(words[i], ":")
				if !ok {
					return nil, fmt.Errorf("header %q without a colon", words[i])
				}
				header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			case "-X", "--request":
				method = words[i]
			default:
				if hasBody {
					body += "&"
				}
				body += words[i]
				hasBody = true
			}
		case strings.HasPrefix(w, "-") && strings.Trim(w, "-sSivf") == "" && len(w) > 1:
		case strings.HasPrefix(w, "-"):
			return nil, fmt.Errorf("curl option %s is not understood by the documentation test (docs/design/README.md)", w)
		default:
			if target != "" {
				return nil, fmt.Errorf("two URLs: %s and %s", target, w)
			}
			target = w
		}
	}
	if target == "" {
		return nil, fmt.Errorf("no URL")
	}
	if !strings.Contains(target, "://") {
		target = "http://" + target // curl's default scheme
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("URL %q: %v", target, err)
	}
	b, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	u.Scheme, u.Host = b.Scheme, b.Host
	if method == "" {
		method = "GET"
		if hasBody {
			method = "POST"
		}
	}
	req, err := http.NewRequest(method, u.String(), strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	if hasBody && header.Get("Content-Type") == "" {
		header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header = header
	return req, nil
}

// TestDocExamples runs every documented curl command against serve --demo
// on each engine: each answers 2xx with something in it (not [] and not a
// total of 0), or what its block's marker says.
func TestDocExamples(t *testing.T) {
	var examples []docExample
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(docRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		ex, err := docExamples(f, text)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, ex...)
	}
	if len(examples) < 50 {
		t.Fatalf("%d examples found in README.md and docs/: the extraction is broken", len(examples))
	}
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dsn := storetest.DSN(t, engine)
			// No per-key limit: the examples run back to back with one key each.
			s := startServer(t, dsn, "--demo", "--rate-limit", "0", "--alert-baseline", "1s", "--alert-feed-interval", "1s")
			keys := demoKeys(t, s.stdout.String())
			// The free tier's 100 credits are fewer than the examples using it.
			var stderr bytes.Buffer
			if err := run(context.Background(), []string{"account", "update", "Demo Free", "--credits", "100000", "--database", dsn},
				func(string) string { return "" }, io.Discard, &stderr); err != nil {
				t.Fatalf("raise the free account's credits: %v %s", err, stderr.String())
			}
			alerts := waitDemoAlerts(t, s, keys["enterprise"])
			status, body := s.do(t, "GET", "/api/v1/enterprise/organizations", keys["enterprise"], "")
			var orgs []struct{ ID string }
			if err := json.Unmarshal(body, &orgs); status != 200 || err != nil || len(orgs) == 0 {
				t.Fatalf("organizations: %d %s", status, body)
			}
			vars := map[string]string{
				"FREE": keys["free"], "ENT": keys["enterprise"], "OEM": keys["oem"],
				"B": s.base + "/api/v1", "ORG": orgs[0].ID, "ALERT_ID": alerts[0].ID,
			}
			for _, e := range examples {
				where := fmt.Sprintf("%s:%d: %s", e.file, e.line, e.cmd)
				words, err := shellWords(e.cmd, vars)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				req, err := docRequest(words, s.base)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				resp, err := s.client.Do(req)
				if err != nil {
					t.Errorf("%s: %v", where, err)
					continue
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case e.expect == "" || e.expect == "empty":
					if resp.StatusCode/100 != 2 {
						t.Errorf("%s: status %d, want 2xx: %s", where, resp.StatusCode, got)
					} else if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
						// A stream (an export): a record in it (a CSV's
						// header line is not one).
						lines := strings.Count(string(bytes.TrimSpace(got)), "\n") + 1
						if e.expect == "" && (len(bytes.TrimSpace(got)) == 0 || strings.HasPrefix(ct, "text/csv") && lines < 2) {
							t.Errorf("%s: no record in the %s answer: %s", where, ct, got)
						}
					} else if !json.Valid(got) {
						t.Errorf("%s: not JSON: %s", where, got)
					} else if empty := emptyAnswer(got); e.expect == "" && empty != "" {
						t.Errorf("%s: empty answer (%s), want data (or mark the block, docs/design/README.md): %s", where, empty, got)
					}
				default:
					if want, _ := strconv.Atoi(e.expect); resp.StatusCode != want {
						t.Errorf("%s: status %d, want %d: %s", where, resp.StatusCode, want, got)
					}
				}
			}
		})
	}
}

// TestDocExamplesExtraction checks the extraction on a sample: the
// commands, continuations, markers and variables the documentation uses.
func TestDocExamplesExtraction(t *testing.T) {
	md := "# T\n\n```sh\ncurl -s -H \"X-API-KEY: $FREE\" $B/a   # a comment\n" +
		"curl -s -H \"X-API-KEY: $OEM\" -d '{\"q\":\"x y\"}' \\\n  $B/b | jq .\nperiscope ingest x\n```\n\n" +
		"<!-- examples: status 401 -->\n```sh\ncurl -s \"$B/c?x=1&y=2\"\n```\n" +
		"<!-- examples: skip: needs a DNS record -->\n```sh\ncurl -s $B/d\n```\n" +
		"```json\n{\"curl \": 1}\n```\n"
	ex, err := docExamples("t.md", []byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(ex) != 3 || ex[0].line != 4 || ex[1].line != 5 || ex[2].expect != "401" || ex[0].expect != "" {
		t.Fatalf("examples: %+v", ex)
	}
	vars := map[string]string{"FREE": "kf", "OEM": "ko", "B": "http://h:1/api/v1"}
	var got []string
	for _, e := range ex {
		w, err := shellWords(e.cmd, vars)
		if err != nil {
			t.Fatal(err)
		}
		req, err := docRequest(w, "http://127.0.0.1:9")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(req.Body)
		got = append(got, fmt.Sprintf("%s %s %s %s", req.Method, req.URL, req.Header.Get("X-API-KEY"), b))
	}
	want := []string{
		"GET http://127.0.0.1:9/api/v1/a kf ",
		`POST http://127.0.0.1:9/api/v1/b ko {"q":"x y"}`,
		"GET http://127.0.0.1:9/api/v1/c?x=1&y=2  ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, bad := range []string{
		"<!-- examples: maybe -->\n```sh\ncurl -s $B/a\n```\n",
		"<!-- examples: skip -->\n```sh\ncurl -s $B/a\n```\n",
		"<!-- examples: skip: no block follows -->\nSome text.\n",
		"<!-- examples: status 4xx -->\n```sh\ncurl -s $B/a\n```\n",
	} {
		if _, err := docExamples("t.md", []byte(bad)); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
	if _, err := shellWords(`curl -s -H "X-API-KEY: $KEY" $B/a`, vars); err == nil || !strings.Contains(err.Error(), "$KEY") {
		t.Errorf("unknown variable: %v", err)
	}
	if _, err := docRequest([]string{"curl", "-G", "http://h/a"}, "http://127.0.0.1:9"); err == nil {
		t.Error("no error for an option the test does not understand")
	}
}

// TestDocLinks checks every relative link of README.md and docs/: the file
// exists and, for a #fragment, the Markdown file has a heading of that
// anchor (GitHub's rule: lower case, punctuation dropped, spaces to -).
func TestDocLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := anchors[path]; ok {
			return a, nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a := map[string]bool{}
		inCode := false
		for _, l := range strings.Split(string(text), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inCode = !inCode
			}
			if inCode || !strings.HasPrefix(l, "#") {
				continue
			}
			h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
			var b strings.Builder
			for _, r := range h {
				switch {
				case r == ' ':
					b.WriteByte('-')
				case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
					b.WriteRune(r)
				}
			}
			a[b.String()] = true
		}
		anchors[path] = a
		return a, nil
	}
	n := 0
	for _, f := range docFiles(t) {
		path := filepath.Join(docRoot, f)
		text, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inCode := false
		for i, l := range strings.Split(string(text), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inCode = !inCode
			}
			if inCode {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				n++
				file, frag, _ := strings.Cut(target, "#")
				dest := path
				if file != "" {
					dest = filepath.Join(filepath.Dir(path), file)
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %s: no such file", f, i+1, target)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				a, err := anchorsOf(dest)
				if err != nil {
					t.Fatal(err)
				}
				if !a[frag] {
					t.Errorf("%s:%d: link %s: no heading with that anchor", f, i+1, target)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("%d relative links found: the scan is broken", n)
	}
}

// TestDocPaths checks that the repository paths the documentation names
// (`internal/…`, `cmd/…`, `bench/…` in backquotes) exist, and that every
// package of docs/design/README.md's layout table is a directory of
// internal/, and that every package with migrations has a row in the
// storage map: the maps a newcomer follows point at real files after a
// rename.
func TestDocPaths(t *testing.T) {
	path := regexp.MustCompile("`((?:internal|cmd|bench)/[A-Za-z0-9_./-]+)`")
	n := 0
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(docRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(text), "\n") {
			for _, m := range path.FindAllStringSubmatch(l, -1) {
				n++
				p := strings.TrimSuffix(m[1], ".")
				if _, err := os.Stat(filepath.Join(docRoot, p)); err != nil {
					t.Errorf("%s:%d: %s does not exist", f, i+1, p)
				}
			}
		}
	}
	if n < 20 {
		t.Fatalf("%d paths found: the scan is broken", n)
	}
	text, err := os.ReadFile(filepath.Join(docRoot, "docs", "design", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, layout, _ := strings.Cut(string(text), "| package | what it does |")
	layout, _, _ = strings.Cut(layout, "\n\n")
	name := regexp.MustCompile("`([a-z0-9/]+)`")
	pkgs := 0
	for _, row := range strings.Split(layout, "\n") {
		cells := strings.Split(row, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			pkgs++
			if fi, err := os.Stat(filepath.Join(docRoot, "internal", m[1])); err != nil || !fi.IsDir() {
				t.Errorf("docs/design/README.md: package %s is not a directory of internal/", m[1])
			}
		}
	}
	if pkgs < 20 {
		t.Fatalf("%d packages in docs/design/README.md's layout table: the scan is broken", pkgs)
	}
	// Every package with migrations has its row in the storage map.
	_, storage, _ := strings.Cut(string(text), "## Storage map")
	dirs, err := filepath.Glob(filepath.Join(docRoot, "internal", "*", "migrations"))
	if err != nil || len(dirs) < 5 {
		t.Fatalf("migration directories: %v %v", dirs, err)
	}
	for _, d := range dirs {
		pkg := filepath.Base(filepath.Dir(d))
		if !strings.Contains(storage, "| `internal/"+pkg+"` |") {
			t.Errorf("docs/design/README.md: internal/%s has migrations but no row in the storage map", pkg)
		}
	}
}

// TestDocRoutes checks that every route of internal/api/routes.go, the
// API map, is named in README.md or docs/ with its whole path (the
// /api/v1 prefix may be left out; a {parameter} may be written as a value
// or a variable), so every route has a documented place.
func TestDocRoutes(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(docRoot, "internal", "api", "routes.go"))
	if err != nil {
		t.Fatal(err)
	}
	var docs strings.Builder
	for _, f := range docFiles(t) {
		text, err := os.ReadFile(filepath.Join(docRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(text)
		docs.WriteByte('\n')
	}
	param := regexp.MustCompile(`\\\{[a-z_]+\\\}`)
	routes := regexp.MustCompile(`\.handle\("([A-Z]+) (/[^"]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(routes) < 50 {
		t.Fatalf("%d routes read from routes.go: the scan is broken", len(routes))
	}
	for _, r := range routes {
		p := regexp.QuoteMeta(strings.TrimPrefix(r[2], "/api/v1"))
		p = param.ReplaceAllString(p, "[^/\\s\"'?`)]+")
		if !regexp.MustCompile(p + `([^\w/-]|$)`).MatchString(docs.String()) {
			t.Errorf("route %s %s is not named in README.md or docs/ (say what it does in docs/api.md)", r[1], r[2])
		}
	}
}
