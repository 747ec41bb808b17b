-- +goose Up

-- The earlier versions of a payload an operator edited (message edit, §5):
-- one row per version before the message's current one, which stays its
-- payload_id. A version row holds the reference to its payload that the
-- message held before the edit, so the payload's refs count it; the row,
-- and that reference, go with the message.
CREATE TABLE payload_versions (
    message_id uuid NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    version    integer NOT NULL CHECK (version >= 1),
    payload_id uuid NOT NULL,
    PRIMARY KEY (message_id, version)
);

-- +goose StatementBegin
CREATE FUNCTION payload_version_deleted() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE payloads SET refs = refs - 1 WHERE id = OLD.payload_id;
    DELETE FROM payloads WHERE id = OLD.payload_id AND refs = 0;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER payload_version_deleted AFTER DELETE ON payload_versions
    FOR EACH ROW EXECUTE FUNCTION payload_version_deleted();
