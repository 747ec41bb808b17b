-- +goose Up

-- A claim takes free queues up to its node's shares (§11), so that a new
-- queue, or one another node gave up, waits for no heartbeat. Looking for
-- them costs the shares of the whole cluster: a claim looks only when a
-- lease became free since it last looked. lease_changes counts the leases
-- that became free — a queue created (its lease comes free), a lease given
-- up, left, or freed by a recovery — and every claim reads it with its
-- statement. A sequence is read without a lock and its count is not rolled
-- back: an increment that its transaction then rolls back only makes one
-- claim look for nothing.
CREATE SEQUENCE lease_changes;

-- +goose StatementBegin
CREATE FUNCTION lease_freed() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    PERFORM nextval('lease_changes');
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER lease_freed AFTER INSERT OR UPDATE OF expires_at ON leases
    FOR EACH ROW WHEN (NEW.expires_at = '-infinity') EXECUTE FUNCTION lease_freed();
