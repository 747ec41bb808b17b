-- +goose Up

-- The messages of EO queues take their sequence numbers from a sequence
-- (§14: no hot row on the EO path): a message joins an EO queue without
-- waiting for the lock of the queue's row, which senders, routing, claims
-- and outcomes would otherwise all take turns at. A node reserves the
-- numbers in blocks of the increment. The sequence starts above every
-- number an EO queue has given out.
CREATE SEQUENCE messages_eo_seq INCREMENT BY 1024;
SELECT setval('messages_eo_seq', (SELECT coalesce(max(last_seq), 0) + 1 FROM queues WHERE qos = 'EO'), false);
