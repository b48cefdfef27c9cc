-- inbox: users and messages; message_recipient is the many-to-many link (MariaDB 10.11 / MySQL 8).
-- Runs in the current database; safe to re-run (drops children first).

SET NAMES utf8mb4;
SET @old_sql_notes = @@sql_notes, sql_notes = 0;

DROP TABLE IF EXISTS message_recipient;
DROP TABLE IF EXISTS message;
DROP TABLE IF EXISTS app_user;

SET sql_notes = @old_sql_notes;

CREATE TABLE app_user (
    user_id      INT          NOT NULL,
    handle       VARCHAR(40)  NOT NULL,
    display_name VARCHAR(80)  NULL,
    PRIMARY KEY (user_id),
    CONSTRAINT app_user_handle_uq UNIQUE (handle)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE message (
    message_id   BIGINT       NOT NULL,
    sender_id    INT          NOT NULL,
    sent_at      DATETIME     NOT NULL,
    subject      VARCHAR(120) NULL,
    body         TEXT         NULL,
    PRIMARY KEY (message_id),
    KEY message_sender_idx (sender_id),
    CONSTRAINT message_sender_fk FOREIGN KEY (sender_id) REFERENCES app_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE message_recipient (
    message_id   BIGINT       NOT NULL,
    recipient_id INT          NOT NULL,
    read_flag    BOOLEAN      NOT NULL DEFAULT FALSE,
    PRIMARY KEY (message_id, recipient_id),
    KEY message_recipient_recipient_idx (recipient_id),
    CONSTRAINT message_recipient_message_fk   FOREIGN KEY (message_id)   REFERENCES message (message_id),
    CONSTRAINT message_recipient_recipient_fk FOREIGN KEY (recipient_id) REFERENCES app_user (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
