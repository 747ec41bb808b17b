-- +goose Up

-- Every receiver has outbound queues of its own (§3): the code its queue
-- names carry is assigned once, here, at its first message — the CRC code
-- of its name first, the next free one on a clash — and every node reads
-- it from this table.
CREATE TABLE receiver_codes (
    receiver text COLLATE "C" PRIMARY KEY,
    code     text COLLATE "C" NOT NULL UNIQUE CHECK (code ~ '^[0-9A-F]{4}$')
);

-- A store from before keeps its queue names: each receiver gets the code
-- its outbound queues carry; of receivers whose queues were shared, the
-- first by queue name keeps the code and the others get one of their own
-- at their next message.
INSERT INTO receiver_codes (receiver, code)
SELECT DISTINCT ON (substr(name, 5, 4)) receiver, substr(name, 5, 4)
FROM queues
WHERE stage = 'outbound' AND coalesce(receiver, '') <> '' AND substr(name, 5, 4) ~ '^[0-9A-F]{4}$'
ORDER BY substr(name, 5, 4), name
ON CONFLICT DO NOTHING;
