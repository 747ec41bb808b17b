-- +goose Up

-- The EOIO switch procedure (§10).

-- The switch state: at most one row; none before the first switch, when
-- EOIO has one queue per app queue under the prefix XBQ. The current set
-- gets the new messages; the old one drains.
CREATE TABLE eoio_switch (
    one         boolean PRIMARY KEY DEFAULT true CHECK (one),
    prefix      text NOT NULL CHECK (prefix IN ('XBQ', 'XB2')),
    queues      integer NOT NULL CHECK (queues BETWEEN 0 AND 99),
    old_prefix  text CHECK (old_prefix IN ('XBQ', 'XB2')),
    old_queues  integer NOT NULL CHECK (old_queues BETWEEN 0 AND 99),
    switched_at timestamptz NOT NULL,
    switched_by text NOT NULL
);

-- The open messages of one app queue, by queue and in order: which
-- messages follow a failed one to its error queue, and whether an app queue
-- still has messages in the queues of the old set (app_queue = $1 AND queue
-- LIKE 'XBQ%': queue's collation is C, so the prefix is a range).
CREATE INDEX messages_app_open ON messages (app_queue, queue, seq)
    WHERE app_queue IS NOT NULL AND status IN ('TBDL', 'DLNG', 'WAIT', 'HOLD', 'NDLV');
