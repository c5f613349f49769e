package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/periscope-oss/periscope/internal/store/storetest"
)

// TestDemoExamplesAnswer runs every curl command serve --demo prints, as
// printed (its headers, method and body), against the demo server: each
// answers 200 with something in it, so no example shows a new user an
// error or an empty answer (the alerts example once the demo's changes
// have raised them).
func TestDemoExamplesAnswer(t *testing.T) {
	s := startServer(t, storetest.DSN(t, "sqlite"), "--demo", "--alert-baseline", "1s", "--alert-feed-interval", "1s")
	out := s.stdout.String()
	// The alerts example answers once the demo's changes are in.
	waitDemoAlerts(t, s, demoKeys(t, out)["enterprise"])
	_, tried, ok := strings.Cut(out, "Try:\n")
	if !ok {
		t.Fatalf("no examples printed:\n%s", out)
	}
	n := 0
	for _, line := range strings.Split(tried, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "curl ") {
			continue
		}
		n++
		req, err := curlRequest(line, s.base)
		if err != nil {
			t.Fatalf("example %d: %v", n, err)
		}
		// Named by method, path and body: the line holds a key.
		line = fmt.Sprintf("example %d (%s %s %s)", n, req.Method, req.URL.RequestURI(), bodyOf(line))
		resp, err := s.client.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		var body json.RawMessage
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Errorf("%s: %d %s (%v)", line, resp.StatusCode, body, err)
			continue
		}
		if empty := emptyAnswer(body); empty != "" {
			t.Errorf("%s: empty answer (%s): %s", line, empty, body)
		}
	}
	if n < 20 {
		t.Fatalf("%d examples printed, want every capability's:\n%s", n, out)
	}
}

// bodyOf returns a printed curl command's -d body ("" without one).
func bodyOf(line string) string {
	_, b, _ := strings.Cut(line, " -d '")
	b, _, _ = strings.Cut(b, "'")
	return b
}

// curlRequest builds the request a printed curl command makes: single-quoted
// words, -H headers, -X method, -d body (POST when given) and the URL, whose
// scheme and host are replaced by base (the demo prints the configured
// address, the test listens on :0).
func curlRequest(line, base string) (*http.Request, error) {
	var words []string
	for _, m := range regexp.MustCompile(`'[^']*'|\S+`).FindAllString(line, -1) {
		words = append(words, strings.Trim(m, "'"))
	}
	method, body, url := "GET", "", ""
	header := http.Header{}
	for i := 1; i < len(words); i++ {
		switch w := words[i]; w {
		case "-s":
		case "-H", "-X", "-d":
			if i+1 == len(words) {
				return nil, errors.New(w + " without a value")
			}
			i++
			switch w {
			case "-H":
				k, v, _ := strings.Cut(words[i], ":")
				header.Add(k, strings.TrimSpace(v))
			case "-X":
				method = words[i]
			default:
				body = words[i]
				if method == "GET" {
					method = "POST"
				}
			}
		default:
			url = w
		}
	}
	_, rest, ok := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
	if !ok {
		return nil, errors.New("no URL")
	}
	req, err := http.NewRequest(method, base+"/"+rest, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = header
	return req, nil
}

// emptyAnswer names what makes an answer empty: a JSON null or [] (a
// search without results), or a zero total or empty list under one of the
// answers' usual names, at the top or one level down ("results",
// "response"); "" when it holds something.
func emptyAnswer(body json.RawMessage) string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return "not JSON"
	}
	if l, ok := v.([]any); ok && len(l) == 0 || v == nil {
		return "no records"
	}
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	levels := []map[string]any{m}
	for _, k := range []string{"results", "response"} {
		if sub, ok := m[k].(map[string]any); ok {
			levels = append(levels, sub)
		}
	}
	for _, l := range levels {
		for _, k := range []string{"total", "total_results", "total_query_results", "results_count"} {
			if f, ok := l[k].(float64); ok && f == 0 {
				return k + " 0"
			}
		}
		for _, k := range []string{"results", "items", "hosts", "typosquatting_domains", "potential_phishing_domains"} {
			if a, ok := l[k].([]any); ok && len(a) == 0 {
				return k + " []"
			}
		}
	}
	return ""
}
