package client_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/queuectl/queuectl/client"
)

// A producer sends an order to the warehouse system. The server and a
// token of the producer role come from the environment.
func Example() {
	c, err := client.New(os.Getenv("QUEUECTL_SERVER"), client.WithToken(os.Getenv("QUEUECTL_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	sent, err := c.Send(context.Background(), client.Message{
		QoS:       client.EO,
		Sender:    "ERP",
		Receivers: []string{"WMS"},
		Interface: "OrderCreate",
		Headers:   map[string]string{"X-Order": "4711"},
		Payload:   []byte(`<order id="4711"/>`),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sent.Status)
	// Output: TBDL
}

// A producer that does not know whether its send went through — it timed
// out, or the producer restarted — sends again with the same key. The
// server stores nothing new and answers with the message it holds.
func ExampleClient_Send_key() {
	c, err := client.New(os.Getenv("QUEUECTL_SERVER"), client.WithToken(os.Getenv("QUEUECTL_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	order := client.Message{
		QoS:       client.EO,
		Sender:    "SHOP",
		Receivers: []string{"WMS"},
		Key:       "order-4712", // the producer's own name for the message
		Payload:   []byte(`<order id="4712"/>`),
	}
	first, err := c.Send(context.Background(), order)
	if err != nil {
		log.Fatal(err)
	}
	again, err := c.Send(context.Background(), order)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same message:", again.ID == first.ID)
	fmt.Println("duplicate:", again.Duplicate)

	order.Payload = []byte(`<order id="4712" qty="2"/>`)
	_, err = c.Send(context.Background(), order)
	fmt.Println("another message under the key:", errors.Is(err, client.ErrConflict))
	// Output:
	// same message: true
	// duplicate: true
	// another message under the key: true
}

// Messages of one EOIO application queue are delivered in the order they
// were sent; a batch is checked whole before any of it is stored.
func ExampleClient_SendBatch() {
	c, err := client.New(os.Getenv("QUEUECTL_SERVER"), client.WithToken(os.Getenv("QUEUECTL_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	var batch []client.Message
	for _, step := range []string{"created", "paid", "shipped"} {
		batch = append(batch, client.Message{
			QoS:       client.EOIO,
			Sender:    "ERP",
			Receivers: []string{"WMS"},
			AppQueue:  "ORDER_4713",
			Interface: "Order" + step,
			Payload:   []byte(step),
		})
	}
	sent, err := c.SendBatch(context.Background(), batch)
	if err != nil {
		log.Fatal(err)
	}
	for i, s := range sent {
		fmt.Println(batch[i].Interface, s.Status)
	}
	// Output:
	// Ordercreated TBDL
	// Orderpaid TBDL
	// Ordershipped TBDL
}

// A transactional send: the message goes out if and only if the producer's
// own transaction commits.
func ExampleClient_Prepare() {
	c, err := client.New(os.Getenv("QUEUECTL_SERVER"), client.WithToken(os.Getenv("QUEUECTL_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	sent, err := c.Prepare(ctx, client.Message{
		QoS:       client.EO,
		Sender:    "ERP",
		Receivers: []string{"WMS"},
		Headers:   map[string]string{"X-Order": "4714"}, // what a check-back asks about
		Payload:   []byte(`<order id="4714"/>`),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(sent.Status)

	// ... book order 4714 in the producer's database, and commit that ...

	if err := c.Commit(ctx, sent.ID); err != nil {
		log.Fatal(err)
	}
	fmt.Println("committed")
	// Output:
	// PEND
	// committed
}

// When the producer's transaction fails, the prepared message is rolled
// back and never delivered.
func ExampleClient_Rollback() {
	c, err := client.New(os.Getenv("QUEUECTL_SERVER"), client.WithToken(os.Getenv("QUEUECTL_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	sent, err := c.Prepare(ctx, client.Message{QoS: client.EO, Sender: "ERP", Receivers: []string{"WMS"},
		Payload: []byte(`<order id="4715"/>`)})
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Rollback(ctx, sent.ID); err != nil {
		log.Fatal(err)
	}
	err = c.Commit(ctx, sent.ID)
	fmt.Println("gone:", errors.Is(err, client.ErrNotFound))
	// Output: gone: true
}

// An error answer of the server is an *APIError, and matches the sentinel of
// its kind.
func ExampleAPIError() {
	c, err := client.New(os.Getenv("QUEUECTL_SERVER"), client.WithToken(os.Getenv("QUEUECTL_TOKEN")))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// An EOIO message needs its application queue.
	_, err = c.Send(context.Background(), client.Message{QoS: client.EOIO, Sender: "ERP", Receivers: []string{"WMS"}})
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code, errors.Is(err, client.ErrInvalid))
	}
	// Output: 400 invalid true
}

// The producer's check endpoint answers the server's check-backs from the
// producer's own records: the server's configuration names it as the
// sender's check_url,
//
//	senders:
//	  ERP: {check_url: "http://127.0.0.1:9100/tx-check"}
func ExampleCheckHandler() {
	var db *sql.DB // the producer's database, where orders are booked

	http.Handle("/tx-check", client.CheckHandler(func(ctx context.Context, c client.Check) (client.TxState, error) {
		var state string
		err := db.QueryRowContext(ctx, "SELECT state FROM orders WHERE id = $1", c.Headers["X-Order"]).Scan(&state)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return client.TxRollback, nil // never booked, and never will be
		case err != nil:
			return "", err // asked again later
		case state == "booked":
			return client.TxCommit, nil
		}
		return client.TxUnknown, nil // still being booked
	}))
	log.Fatal(http.ListenAndServe("127.0.0.1:9100", nil))
}
