// Package client is the Go client of queuectl for producers: it sends
// messages to a running `queuectl serve` over its HTTP API, on TCP or on the
// unix socket beside its store.
//
// # Sending
//
// New names the server the way the command line's --server does:
//
//	c, err := client.New("https://queuectl.example:7870", client.WithToken(token))
//	c, err := client.New("unix:///var/lib/queuectl/queuectl.db.sock")
//
// Over TCP the server wants a token of the producer role (`queuectl token
// create erp --role producer`); the socket, which only its owner may open,
// wants none. Send stores one message and returns its id, which is the id
// operators see from send to delivery; SendBatch sends many in one request,
// all checked before any is stored.
//
// # Keys and retries
//
// A send that times out may still have been stored. A Message's Key makes
// sending it again safe: the server stores one message per key and sender,
// and answers a repeat with that message, marked Sent.Duplicate. The client
// retries a call that got no answer, or a 5xx answer, with the same key
// (RetryPolicy). A message sent without a key gets a fresh one from the
// client, so that the client's own retries are safe too; that key is lost
// with the process, so a producer that must send again after a restart
// chooses its key itself — an order number, or one from NewKey stored with
// its record — and reuses it. WithoutGeneratedKeys turns the generated keys
// off; a send without a key is then retried only when it surely never
// reached the server.
//
// # Transactional send
//
// A message that must go out if and only if the producer's own transaction
// commits is prepared first (Prepare: it is stored as PEND and not
// delivered), then committed with Commit or deleted with Rollback once the
// producer knows how its transaction ended. A producer that dies in
// between is asked: the server POSTs a check to the sender's check_url
// (senders: in the server's configuration), and CheckHandler answers it from
// the producer's records.
//
// # Errors
//
// Errors match the sentinels ErrInvalid, ErrTooLarge, ErrNotFound,
// ErrConflict, ErrUnauthorized, ErrForbidden and ErrUnavailable with
// errors.Is; an error answer of the server is an *APIError, with its HTTP
// status and message, for errors.As. A context that ends stops a call at
// once, with the context's error.
package client
