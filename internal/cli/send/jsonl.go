package send

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/queuectl/queuectl/internal/admin"
	"github.com/queuectl/queuectl/internal/admin/wire"
	"github.com/queuectl/queuectl/internal/cli/cmdutil"
	"github.com/queuectl/queuectl/internal/domain"
	"github.com/queuectl/queuectl/internal/output"
)

// sendJSONL sends the messages of stdin's lines: it checks and spools every
// line first (nothing is stored when one is bad), then opens the service
// and stores them in batches, printing each batch's ids as it is stored,
// in input order. Memory stays bounded however many lines there are.
func (opts *Options) sendJSONL(ctx context.Context, format output.Format) error {
	limit, err := opts.PayloadLimit(ctx)
	if err != nil {
		return err
	}
	sp, err := SpoolJSONL(ctx, cmdutil.ContextReader(ctx, opts.IO.In), limit)
	if err != nil {
		return err
	}
	defer sp.Close()
	if sp.Len() == 0 {
		return domain.Invalidf("--jsonl: stdin held no messages")
	}
	svc, err := opts.Admin()
	if err != nil {
		return err
	}
	l := newIDList(opts.IO.Out, format)
	stored, repeats := 0, 0
	err = sp.Batches(func(reqs []domain.SendRequest, lines []int) error {
		msgs, err := svc.Send(ctx, reqs)
		for _, m := range msgs {
			if m.Duplicate {
				repeats++
			}
			if err := l.Add(m); err != nil {
				return err
			}
		}
		stored += len(msgs)
		var rerr *admin.RequestError
		switch {
		case err == nil:
			return l.Flush()
		case errors.As(err, &rerr):
			// Checked before; the service's limits differ from those asked.
			err = fmt.Errorf("line %d: %w", lines[rerr.Index], rerr.Err)
		case len(reqs) == 1 && (errors.Is(err, domain.ErrInvalid) || errors.Is(err, domain.ErrTooLarge)):
			err = fmt.Errorf("line %d: %w", lines[0], err)
		}
		if stored == 0 {
			return fmt.Errorf("%w; nothing was stored", err)
		}
		// Some stored, some not: exit 5, whatever refused the rest.
		return domain.Errorf(cmdutil.ErrPartial, "stored %d of %d messages (their ids are printed), then: %v", stored, sp.Len(), err)
	})
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err == nil && repeats > 0 {
		opts.Hintf("%d of %d lines repeated a key their sender used already: their ids are the messages sent with it first; nothing new was stored for them",
			repeats, sp.Len())
	}
	return err
}

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
	Key        *string           `json:"key"`
	Prepare    bool              `json:"prepare"`
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
	if m.Key != nil {
		if *m.Key == "" {
			return nil, domain.Invalidf(`"key" is empty; a key is 1-%d printable characters (leave it out for none)`, domain.MaxKey)
		}
		req.Key = *m.Key
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
const jsonlFields = `qos, sender, receiver, receivers, app_queue, interface, headers, payload, payload_b64, key, prepare`

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
