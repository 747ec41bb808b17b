package httpapi

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/queuectl/queuectl/internal/admin"
)

// maxRefusedBody bounds what is read of a refused request's body to name
// its targets: an action's ids (a command sends at most a chunk of them at
// a time), a tuning value's subparameter.
const maxRefusedBody = 1 << 20

// refusedBody is what a refusal names of a request's body.
type refusedBody struct {
	Targets []string        `json:"targets"`
	Sub     string          `json:"sub"`
	Queues  json.RawMessage `json:"queues"`
}

// auditAction names a mutating request in the audit log as the service
// names the action it would have been — message.fail, tune.set, send —
// with the targets it would have had, so that a refusal is found under
// the same action as what it refused (audit list --action message.fail).
// body is the request's body, or nil when it is not read (a request with
// no valid token, whose body nobody should have to read; one a handler
// read already). A request of no action is named by its method and path.
func auditAction(rt *route, r *http.Request, body []byte) (string, []string) {
	var b refusedBody
	if len(body) > 0 {
		_ = json.Unmarshal(body, &b) // a malformed body names no targets
	}
	if b.Targets == nil {
		b.Targets = []string{}
	}
	if rt == nil || !rt.mutating {
		return r.Method + " " + r.URL.Path, []string{}
	}
	switch rt.Method + " " + rt.Pattern {
	case "POST /v1/actions/{action...}":
		return string(admin.Action(r.PathValue("action"))), b.Targets
	case "POST /v1/messages":
		return "send", []string{}
	case "DELETE /v1/tuning/{param...}":
		return "tune.unset", []string{r.PathValue("param") + "/" + r.URL.Query().Get("sub")}
	case "PUT /v1/tuning/{param...}":
		return "tune.set", []string{r.PathValue("param") + "/" + b.Sub}
	case "POST /v1/purge":
		return "purge", []string{}
	case "POST /v1/eoio/switch":
		var q string
		if err := json.Unmarshal(b.Queues, &q); err != nil {
			q = string(b.Queues)
		}
		return "eoio.switch", []string{"queues=" + q}
	}
	return r.Method + " " + r.URL.Path, []string{}
}

// readRefused reads the body of a request refused before its handler ran,
// bounded, to name its targets.
func readRefused(r *http.Request) []byte {
	if r.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, maxRefusedBody))
	return b
}
