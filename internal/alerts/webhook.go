package alerts

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/periscope-oss/periscope/internal/alertstore"
)

// Payload formats of an endpoint.
var Formats = []string{"json", "slack", "teams"}

// NewSecret returns a signing secret in the Standard Webhooks form:
// "whsec_" and the base64 of 24 random bytes.
func NewSecret() string {
	var b [24]byte
	rand.Read(b[:])
	return "whsec_" + base64.StdEncoding.EncodeToString(b[:])
}

// secretKey decodes a whsec_ secret into its HMAC key.
func secretKey(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return nil, errors.New("webhook secret is not whsec_<base64>")
	}
	return k, nil
}

// Sign returns the webhook-signature header value for a message: one
// "v1,<base64 HMAC-SHA256 of id.timestamp.body>" per secret, separated by
// spaces (two during a rotation).
func Sign(secrets []string, id string, ts int64, body []byte) (string, error) {
	var sigs []string
	for _, s := range secrets {
		k, err := secretKey(s)
		if err != nil {
			return "", err
		}
		m := hmac.New(sha256.New, k)
		fmt.Fprintf(m, "%s.%d.", id, ts)
		m.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// Verify checks a delivery as a receiver does: the timestamp within
// tolerance of now and one v1 signature made with secret.
func Verify(secret, id, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("bad webhook-timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return errors.New("webhook-timestamp outside tolerance")
	}
	want, err := Sign([]string{secret}, id, ts, body)
	if err != nil {
		return err
	}
	for _, sig := range strings.Fields(signature) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return errors.New("no matching signature")
}

// alertJSON is an alert as payloads carry it (the /enterprise/alerts item).
type alertJSON struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	Severity       string          `json:"severity"`
	State          string          `json:"state"`
	Title          string          `json:"title"`
	Message        string          `json:"message"`
	Host           string          `json:"host"`
	Domain         string          `json:"domain"`
	OrganizationID string          `json:"organization_id"`
	Count          int64           `json:"count"`
	FirstSeen      int64           `json:"first_seen"`
	LastSeen       int64           `json:"last_seen"`
	Evidence       json.RawMessage `json:"evidence"`
}

// Payload renders an alert event for an endpoint's format. event is
// "alert.created", "alert.reopened" or "webhook.test".
func Payload(format, event string, a alertstore.Alert, now time.Time) ([]byte, error) {
	switch format {
	case "json", "":
		return json.Marshal(map[string]any{"type": event, "timestamp": now.UTC().Format(time.RFC3339), "data": alertJSON{
			ID: a.ID, Type: a.Type, Severity: a.Severity, State: a.State, Title: a.Title, Message: a.Message, Host: a.Host,
			Domain: a.Domain, OrganizationID: a.OrganizationID, Count: a.Count, FirstSeen: a.FirstSeen, LastSeen: a.LastSeen, Evidence: a.Evidence}})
	case "slack":
		head := fmt.Sprintf("[%s] %s", strings.ToUpper(a.Severity), a.Title)
		return json.Marshal(map[string]any{"text": head, "blocks": []any{
			map[string]any{"type": "header", "text": map[string]any{"type": "plain_text", "text": clip(head, 150)}},
			map[string]any{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": clip(a.Message, 3000)}},
			map[string]any{"type": "context", "elements": []any{map[string]any{"type": "mrkdwn",
				"text": fmt.Sprintf("%s · %s · seen %d× · alert %s", a.Type, a.Host, a.Count, a.ID)}}},
		}})
	case "teams":
		return json.Marshal(map[string]any{"type": "message", "attachments": []any{map[string]any{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"content": map[string]any{
				"$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard", "version": "1.4",
				"body": []any{
					map[string]any{"type": "TextBlock", "size": "Medium", "weight": "Bolder", "wrap": true, "text": fmt.Sprintf("[%s] %s", strings.ToUpper(a.Severity), a.Title)},
					map[string]any{"type": "TextBlock", "wrap": true, "text": a.Message},
					map[string]any{"type": "FactSet", "facts": []any{
						map[string]any{"title": "Type", "value": a.Type}, map[string]any{"title": "Host", "value": a.Host},
						map[string]any{"title": "Seen", "value": strconv.FormatInt(a.Count, 10)}, map[string]any{"title": "Alert", "value": a.ID}}},
				},
			},
		}}})
	}
	return nil, fmt.Errorf("unknown webhook format %q", format)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	for len(string(r)) > n-3 {
		r = r[:len(r)-1]
	}
	return string(r) + "..."
}

// Wants reports whether an endpoint takes an alert: at least its minimum
// severity and of one of its types (all types when it lists none).
func Wants(e alertstore.Endpoint, a alertstore.Alert) bool {
	if SeverityRank(a.Severity) < SeverityRank(e.MinSeverity) {
		return false
	}
	if len(e.Types) == 0 {
		return true
	}
	for _, t := range e.Types {
		if t == a.Type {
			return true
		}
	}
	return false
}
