-- +goose Up

-- The queuectl schema: messages with their payloads and history, queue
-- records with per-status counters, tuning parameters and the audit log
-- (SPEC §2-§7), and the cluster's nodes and queue leases (§11).
--
-- Lock order, kept by every transaction that writes: a queue's row before
-- the rows of its messages (queues in name order when there are several),
-- then payloads. A writer that holds a queue's row lock is the only one
-- that changes the queue's messages, counters and sequence.

-- One row per physical queue (§3). The counters are kept by every
-- transaction that changes a message of the queue, under the row's lock, so
-- `queue list` reads one row per queue. The row is updated on every change
-- of its messages: the low fill factor leaves room for HOT updates.
CREATE TABLE queues (
    name        text COLLATE "C" PRIMARY KEY,
    qos         text NOT NULL CHECK (qos IN ('EO', 'EOIO')),
    stage       text NOT NULL CHECK (stage IN ('inbound', 'outbound')),
    receiver    text,
    stopped     boolean NOT NULL DEFAULT false,
    last_seq    bigint NOT NULL DEFAULT 0,
    n_pend      bigint NOT NULL DEFAULT 0,
    n_tbdl      bigint NOT NULL DEFAULT 0,
    n_dlng      bigint NOT NULL DEFAULT 0,
    n_wait      bigint NOT NULL DEFAULT 0,
    n_hold      bigint NOT NULL DEFAULT 0,
    n_ndlv      bigint NOT NULL DEFAULT 0,
    n_dlvd      bigint NOT NULL DEFAULT 0,
    n_fail      bigint NOT NULL DEFAULT 0,
    -- open messages that no longer hold the queue up (domain.PassedOver):
    -- part of n_ndlv, but they block nothing.
    passed_over bigint NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL
) WITH (fillfactor = 50);

-- A payload is stored once, under an id of its own, by the message that
-- brought it in; the outbound messages routed from that message refer to
-- the same row. refs counts the messages that refer to it; the row goes
-- with the last of them.
CREATE TABLE payloads (
    id   uuid PRIMARY KEY,
    refs integer NOT NULL CHECK (refs >= 0),
    data bytea NOT NULL
);

CREATE TABLE messages (
    id              uuid PRIMARY KEY,
    -- NULL while PEND: a message gets its seq when it becomes visible to
    -- delivery, so that EOIO order is commit order (§9).
    seq             bigint,
    size            bigint NOT NULL,
    payload_id      uuid NOT NULL,
    parent_id       uuid,
    -- The node, and its incarnation, that claimed the message while it is
    -- DLNG (§11): crash recovery of a dead incarnation touches only these.
    incarnation     bigint,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    next_attempt_at timestamptz,
    attempts        integer NOT NULL DEFAULT 0,
    crashes         integer NOT NULL DEFAULT 0,
    blacklisted     boolean NOT NULL DEFAULT false,
    -- domain.PassedOver, stored so that the head of a queue is found by
    -- the index without the rule in SQL.
    passed_over     boolean NOT NULL DEFAULT false,
    queue           text COLLATE "C" NOT NULL,
    status          text NOT NULL CHECK (status IN ('PEND', 'TBDL', 'DLNG', 'WAIT', 'HOLD', 'NDLV', 'DLVD', 'FAIL')),
    qos             text NOT NULL CHECK (qos IN ('EO', 'EOIO')),
    stage           text NOT NULL CHECK (stage IN ('inbound', 'outbound')),
    sender          text NOT NULL,
    receiver        text,
    receivers       text[],
    interface       text,
    app_queue       text,
    error           text,
    error_class     text,
    node            text,
    headers         jsonb
);

-- message list --status, blacklist list, purge: one run per status in id
-- order, so a list costs the rows it returns.
CREATE INDEX messages_status ON messages (status, id);
-- The blacklist, in id order.
CREATE INDEX messages_blacklisted ON messages (id) WHERE blacklisted;
-- A queue's order: every message that has a seq (queue show --all).
CREATE UNIQUE INDEX messages_queue_seq ON messages (queue, seq) WHERE seq IS NOT NULL;
-- The open messages of a queue in order (not PEND, DLVD or FAIL): queue
-- show, the head of a queue.
CREATE INDEX messages_open ON messages (queue, seq) WHERE status IN ('TBDL', 'DLNG', 'WAIT', 'HOLD', 'NDLV');
-- What a claim reads: the TBDL messages of a queue in order ...
CREATE INDEX messages_ready ON messages (queue, seq) WHERE status = 'TBDL';
-- ... and the WAIT messages of a queue by the time their next attempt is due.
CREATE INDEX messages_due ON messages (queue, next_attempt_at) WHERE status = 'WAIT';
-- What an incarnation has in flight, for crash recovery and node list.
CREATE INDEX messages_in_flight ON messages (incarnation) WHERE status = 'DLNG';

-- Every status change of a message, oldest first (n counts from 1).
CREATE TABLE history (
    message_id  uuid NOT NULL,
    n           integer NOT NULL,
    at          timestamptz NOT NULL,
    from_status text,
    to_status   text NOT NULL,
    node        text,
    actor       text NOT NULL,
    reason      text,
    PRIMARY KEY (message_id, n)
);

-- Tuning values (§7); sub is '' for a parameter without subparameter.
CREATE TABLE params (
    name  text COLLATE "C" NOT NULL,
    sub   text COLLATE "C" NOT NULL,
    value integer NOT NULL,
    PRIMARY KEY (name, sub)
);

-- Operator actions (§6), in the order they were recorded.
CREATE TABLE audit (
    seq     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at      timestamptz NOT NULL,
    actor   text NOT NULL,
    source  text NOT NULL,
    action  text NOT NULL,
    targets text[],
    result  text NOT NULL,
    detail  text
);
-- audit list --since and the audit retention.
CREATE INDEX audit_at ON audit (at);

-- One row per start of a node (§11): the incarnation numbers every start of
-- every node, so a restarted node with the same id is a new incarnation
-- whose predecessor's leases are dead. Times are the database's clock.
CREATE TABLE nodes (
    incarnation  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           text NOT NULL,
    address      text NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    -- messages DLNG on this incarnation at its last heartbeat (node list)
    in_flight    integer NOT NULL DEFAULT 0,
    -- set when the incarnation left cleanly (nothing to recover) ...
    stopped_at   timestamptz,
    -- ... or when its crash recovery ran, and by which incarnation: the
    -- conditional update that sets it lets one of two racing nodes recover.
    recovered_at timestamptz,
    recovered_by bigint
);
CREATE INDEX nodes_id ON nodes (id, incarnation);
-- Incarnations that neither left nor were recovered: the live ones, and the
-- dead ones still to recover.
CREATE INDEX nodes_unsettled ON nodes (heartbeat_at) WHERE stopped_at IS NULL AND recovered_at IS NULL;

-- Queue ownership (§11): a node delivers only the queues whose lease it
-- holds, under the epoch that every engine write checks. A lease row is
-- never deleted, so a queue's epoch only grows: taking over a lease (or
-- taking it back) increments it, and an outcome carrying an older epoch
-- changes nothing.
CREATE TABLE leases (
    queue       text COLLATE "C" PRIMARY KEY,
    node        text NOT NULL,
    incarnation bigint NOT NULL,
    epoch       bigint NOT NULL,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX leases_incarnation ON leases (incarnation);
