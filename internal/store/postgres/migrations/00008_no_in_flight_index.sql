-- +goose Up

-- What an incarnation has DLNG is found through messages_status: the DLNG
-- messages of the whole cluster are what its nodes have in flight, a few
-- hundred at most, so crash recovery and a lease's handover read them
-- with a short range scan of that index. The index of its own cost every
-- claim an index entry more.
DROP INDEX messages_in_flight;
