-- films: films, actors and categories, linked many-to-many by film_actor and
-- film_category (PostgreSQL 15). Runs in the current database; safe to re-run
-- (drops children first).

SET client_min_messages = warning;

DROP TABLE IF EXISTS film_category;
DROP TABLE IF EXISTS film_actor;
DROP TABLE IF EXISTS category;
DROP TABLE IF EXISTS actor;
DROP TABLE IF EXISTS film;
DROP TABLE IF EXISTS language;

CREATE TABLE language (
    language_id  SMALLINT     NOT NULL,
    name         VARCHAR(20)  NOT NULL,
    PRIMARY KEY (language_id)
);

CREATE TABLE film (
    film_id      INT          NOT NULL,
    title        VARCHAR(120) NOT NULL,
    release_year SMALLINT     NULL,
    language_id  SMALLINT     NOT NULL,
    PRIMARY KEY (film_id),
    CONSTRAINT film_language_fk FOREIGN KEY (language_id) REFERENCES language (language_id)
);

CREATE TABLE actor (
    actor_id     INT          NOT NULL,
    first_name   VARCHAR(45)  NOT NULL,
    last_name    VARCHAR(45)  NULL,
    PRIMARY KEY (actor_id)
);

CREATE TABLE category (
    category_id  SMALLINT     NOT NULL,
    name         VARCHAR(25)  NOT NULL,
    PRIMARY KEY (category_id),
    CONSTRAINT category_name_uq UNIQUE (name)
);

-- The links: one row per (actor, film) and per (film, category).
CREATE TABLE film_actor (
    actor_id     INT          NOT NULL,
    film_id      INT          NOT NULL,
    billing      SMALLINT     NULL,
    PRIMARY KEY (actor_id, film_id),
    CONSTRAINT film_actor_actor_fk FOREIGN KEY (actor_id) REFERENCES actor (actor_id),
    CONSTRAINT film_actor_film_fk  FOREIGN KEY (film_id)  REFERENCES film (film_id)
);

CREATE INDEX film_actor_film_idx ON film_actor (film_id);

CREATE TABLE film_category (
    film_id      INT          NOT NULL,
    category_id  SMALLINT     NOT NULL,
    PRIMARY KEY (film_id, category_id),
    CONSTRAINT film_category_film_fk     FOREIGN KEY (film_id)     REFERENCES film (film_id),
    CONSTRAINT film_category_category_fk FOREIGN KEY (category_id) REFERENCES category (category_id)
);

RESET client_min_messages;
