-- +goose Up

-- A message's history moves into its row. Before, every status change
-- inserted a history row and its index entry, and looked up the message's
-- last entry number: six rows and six index entries for a message sent,
-- routed and delivered. Now the statement that changes a message appends
-- the entry to messages.history, which the row writes anyway.
--
-- The encoding is codec.go's (appendHistory): per entry, oldest first, the
-- time in microseconds since the epoch (int8, big-endian), then from, to,
-- node, actor and reason, each a length (int4, big-endian) and that many
-- bytes of UTF-8; a missing value is empty.
ALTER TABLE messages ADD COLUMN history bytea NOT NULL DEFAULT ''::bytea;

UPDATE messages m SET history = h.entries
FROM (
    SELECT message_id, string_agg(
            int8send(round(extract(epoch FROM at) * 1000000)::int8)
            || int4send(octet_length(convert_to(coalesce(from_status, ''), 'UTF8')))
            || convert_to(coalesce(from_status, ''), 'UTF8')
            || int4send(octet_length(convert_to(to_status, 'UTF8'))) || convert_to(to_status, 'UTF8')
            || int4send(octet_length(convert_to(coalesce(node, ''), 'UTF8'))) || convert_to(coalesce(node, ''), 'UTF8')
            || int4send(octet_length(convert_to(actor, 'UTF8'))) || convert_to(actor, 'UTF8')
            || int4send(octet_length(convert_to(coalesce(reason, ''), 'UTF8'))) || convert_to(coalesce(reason, ''), 'UTF8'),
            ''::bytea ORDER BY n) AS entries
    FROM history GROUP BY message_id) h
WHERE h.message_id = m.id;

DROP TABLE history;
