-- bands: bands with shows, albums (with tracks) and members (PostgreSQL 15).
-- `show` and `member` are reserved words in MySQL 8, so the tables are named
-- band_show and band_member in both engines.
-- Runs in the current database; safe to re-run (drops children first).

SET client_min_messages = warning;

DROP TABLE IF EXISTS track;
DROP TABLE IF EXISTS album;
DROP TABLE IF EXISTS band_member;
DROP TABLE IF EXISTS band_show;
DROP TABLE IF EXISTS venue;
DROP TABLE IF EXISTS band;

CREATE TABLE band (
    band_id      INT          NOT NULL,
    name         VARCHAR(100) NOT NULL,
    formed_year  INT          NULL,
    country      VARCHAR(40)  NULL,
    PRIMARY KEY (band_id)
);

CREATE TABLE venue (
    venue_id     INT          NOT NULL,
    name         VARCHAR(100) NOT NULL,
    city         VARCHAR(60)  NOT NULL,
    PRIMARY KEY (venue_id)
);

CREATE TABLE band_show (
    show_id      INT          NOT NULL,
    band_id      INT          NOT NULL,
    venue_id     INT          NOT NULL,
    show_date    DATE         NOT NULL,
    tickets_sold INT          NULL,
    PRIMARY KEY (show_id),
    CONSTRAINT band_show_band_fk  FOREIGN KEY (band_id)  REFERENCES band (band_id),
    CONSTRAINT band_show_venue_fk FOREIGN KEY (venue_id) REFERENCES venue (venue_id)
);

CREATE INDEX band_show_band_idx  ON band_show (band_id);
CREATE INDEX band_show_venue_idx ON band_show (venue_id);

CREATE TABLE album (
    album_id     INT          NOT NULL,
    band_id      INT          NOT NULL,
    title        VARCHAR(120) NOT NULL,
    release_year INT          NOT NULL,
    label        VARCHAR(60)  NULL,
    PRIMARY KEY (album_id),
    CONSTRAINT album_band_fk FOREIGN KEY (band_id) REFERENCES band (band_id)
);

CREATE INDEX album_band_idx ON album (band_id);

CREATE TABLE track (
    track_id     INT          NOT NULL,
    album_id     INT          NOT NULL,
    position     INT          NOT NULL,
    title        VARCHAR(120) NOT NULL,
    duration_s   INT          NOT NULL,
    PRIMARY KEY (track_id),
    CONSTRAINT track_album_position_uq UNIQUE (album_id, position),
    CONSTRAINT track_album_fk FOREIGN KEY (album_id) REFERENCES album (album_id)
);

CREATE TABLE band_member (
    member_id    INT          NOT NULL,
    band_id      INT          NOT NULL,
    name         VARCHAR(80)  NOT NULL,
    instrument   VARCHAR(60)  NOT NULL,
    joined_year  INT          NULL,
    PRIMARY KEY (member_id),
    CONSTRAINT band_member_band_fk FOREIGN KEY (band_id) REFERENCES band (band_id)
);

CREATE INDEX band_member_band_idx ON band_member (band_id);

RESET client_min_messages;
