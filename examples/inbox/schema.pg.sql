-- inbox: users and messages; message_recipient is the many-to-many link (PostgreSQL 15).
-- Runs in the current database; safe to re-run (drops children first).

SET client_min_messages = warning;

DROP TABLE IF EXISTS message_recipient;
DROP TABLE IF EXISTS message;
DROP TABLE IF EXISTS app_user;

CREATE TABLE app_user (
    user_id      INT          NOT NULL,
    handle       VARCHAR(40)  NOT NULL,
    display_name VARCHAR(80)  NULL,
    PRIMARY KEY (user_id),
    CONSTRAINT app_user_handle_uq UNIQUE (handle)
);

CREATE TABLE message (
    message_id   BIGINT       NOT NULL,
    sender_id    INT          NOT NULL,
    sent_at      TIMESTAMP    NOT NULL,
    subject      VARCHAR(120) NULL,
    body         TEXT         NULL,
    PRIMARY KEY (message_id),
    CONSTRAINT message_sender_fk FOREIGN KEY (sender_id) REFERENCES app_user (user_id)
);

CREATE INDEX message_sender_idx ON message (sender_id);

CREATE TABLE message_recipient (
    message_id   BIGINT       NOT NULL,
    recipient_id INT          NOT NULL,
    read_flag    BOOLEAN      NOT NULL DEFAULT FALSE,
    PRIMARY KEY (message_id, recipient_id),
    CONSTRAINT message_recipient_message_fk   FOREIGN KEY (message_id)   REFERENCES message (message_id),
    CONSTRAINT message_recipient_recipient_fk FOREIGN KEY (recipient_id) REFERENCES app_user (user_id)
);

CREATE INDEX message_recipient_recipient_idx ON message_recipient (recipient_id);

RESET client_min_messages;
