package api

import "testing"

// A webhook URL naming a port the dispatcher never dials is refused when
// the endpoint is written; without a port list (--allow-private-targets)
// any port is accepted.
func TestCheckWebhookURLPorts(t *testing.T) {
	ports := []int{80, 443, 8080, 8443}
	for _, c := range []struct {
		url   string
		ports []int
		ok    bool
	}{
		{"https://hooks.example.net/p", ports, true},
		{"http://hooks.example.net/p", ports, true},
		{"https://hooks.example.net:8443/p", ports, true},
		{"https://hooks.example.net:9999/p", ports, false},
		{"http://hooks.example.net:22/p", ports, false},
		{"https://hooks.example.net:9999/p", nil, true},
		{"ftp://hooks.example.net/p", nil, false},
		{"https://user:pw@hooks.example.net/p", nil, false},
	} {
		err := checkWebhookURL(c.url, c.ports)
		if (err == nil) != c.ok {
			t.Errorf("checkWebhookURL(%q, %v) = %v, want ok %v", c.url, c.ports, err, c.ok)
		}
	}
}
