-- +goose Up

-- One message, one id (§3): routing moves a message with one receiver on
-- to its receiver's outbound queue instead of making a copy of it there.
-- inbound_queue names the queue it passed through, which counts it as
-- DLVD as long as the message is kept.
ALTER TABLE messages ADD COLUMN inbound_queue text;
