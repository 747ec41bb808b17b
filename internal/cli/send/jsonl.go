package send

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/domain"
)

// jsonlMessage is one input line of `send --jsonl`.
type jsonlMessage struct {
	QoS        string            `json:"qos"`
	Sender     string            `json:"sender"`
	Receiver   string            `json:"receiver"`
	Receivers  []string          `json:"receivers"`
	AppQueue   string            `json:"app_queue"`
	Interface  string            `json:"interface"`
	Headers    map[string]string `json:"headers"`
	Payload    *string           `json:"payload"`
	PayloadB64 *string           `json:"payload_b64"`
	Prepare    bool              `json:"prepare"`
}

// maxLine bounds one JSONL line: the largest payload limit plus headroom for
// base64 and metadata.
const maxLine = 64 << 20

// ReadJSONL parses every line of r into send requests and checks each
// against the rules of §2 that do not depend on server settings; it returns
// the line number of each request. Blank lines are skipped.
func ReadJSONL(r io.Reader) ([]domain.SendRequest, []int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var reqs []domain.SendRequest
	var lines []int
	n := 0 // the number of the line last read
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		req, err := parseLine(line)
		if err == nil {
			err = req.Validate(1<<62 - 1)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w; nothing was stored", n, err)
		}
		reqs = append(reqs, *req)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, nil, domain.Invalidf("line %d is longer than %s; nothing was stored", n+1, domain.FormatBytes(maxLine))
		}
		return nil, nil, fmt.Errorf("reading stdin: %w", err)
	}
	return reqs, lines, nil
}

func parseLine(line []byte) (*domain.SendRequest, error) {
	if err := wire.CheckText(line); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var m jsonlMessage
	if err := dec.Decode(&m); err != nil {
		return nil, decodeError(err)
	}
	if dec.More() {
		return nil, domain.Invalidf("more than one JSON value on the line")
	}
	qos, err := domain.ParseQoS(m.QoS)
	if m.QoS == "" {
		err = domain.Invalidf(`"qos" is required (EO or EOIO)`)
	}
	if err != nil {
		return nil, err
	}
	req := &domain.SendRequest{
		QoS: qos, Sender: m.Sender, Receivers: m.Receivers, AppQueue: m.AppQueue,
		Interface: m.Interface, Headers: m.Headers, Prepare: m.Prepare,
	}
	if m.Receiver != "" {
		if len(m.Receivers) > 0 {
			return nil, domain.Invalidf(`give "receiver" or "receivers", not both`)
		}
		req.Receivers = []string{m.Receiver}
	}
	switch {
	case m.Payload != nil && m.PayloadB64 != nil:
		return nil, domain.Invalidf(`give "payload" or "payload_b64", not both`)
	case m.Payload != nil:
		req.Payload = []byte(*m.Payload)
	case m.PayloadB64 != nil:
		if req.Payload, err = base64.StdEncoding.DecodeString(*m.PayloadB64); err != nil {
			return nil, domain.Invalidf(`"payload_b64" is not valid base64: %v`, err)
		}
	default:
		req.Payload = []byte{}
	}
	return req, nil
}

// jsonlFields are the fields an input line may have, for error messages.
const jsonlFields = `qos, sender, receiver, receivers, app_queue, interface, headers, payload, payload_b64, prepare`

// decodeError says what is wrong with a line in the input's terms, not in
// those of the Go types it is decoded into.
func decodeError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field == "":
		return domain.Invalidf("a line must be a JSON object, not a JSON %s", te.Value)
	case errors.As(err, &te):
		want := map[string]string{
			"receivers": "a list of strings", "headers": "an object of strings",
			"prepare": "true or false",
		}[te.Field]
		if want == "" {
			want = "a string"
		}
		return domain.Invalidf("%q must be %s, not a JSON %s", te.Field, want, te.Value)
	case errors.As(err, &se):
		return domain.Invalidf("not valid JSON: %v", err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return domain.Invalidf("not valid JSON: the line ends inside the object")
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return domain.Invalidf("unknown field %s; the fields are %s", f, jsonlFields)
	}
	return domain.Invalidf("not a JSON message object: %v", err)
}
