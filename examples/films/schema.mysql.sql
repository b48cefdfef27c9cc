-- films: films, actors and categories, linked many-to-many by film_actor and
-- film_category (MariaDB 10.11 / MySQL 8). Runs in the current database; safe
-- to re-run (drops children first).

SET NAMES utf8mb4;
SET @old_sql_notes = @@sql_notes, sql_notes = 0;

DROP TABLE IF EXISTS film_category;
DROP TABLE IF EXISTS film_actor;
DROP TABLE IF EXISTS category;
DROP TABLE IF EXISTS actor;
DROP TABLE IF EXISTS film;
DROP TABLE IF EXISTS language;

SET sql_notes = @old_sql_notes;

CREATE TABLE language (
    language_id  SMALLINT     NOT NULL,
    name         VARCHAR(20)  NOT NULL,
    PRIMARY KEY (language_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE film (
    film_id      INT          NOT NULL,
    title        VARCHAR(120) NOT NULL,
    release_year SMALLINT     NULL,
    language_id  SMALLINT     NOT NULL,
    PRIMARY KEY (film_id),
    CONSTRAINT film_language_fk FOREIGN KEY (language_id) REFERENCES language (language_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE actor (
    actor_id     INT          NOT NULL,
    first_name   VARCHAR(45)  NOT NULL,
    last_name    VARCHAR(45)  NULL,
    PRIMARY KEY (actor_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE category (
    category_id  SMALLINT     NOT NULL,
    name         VARCHAR(25)  NOT NULL,
    PRIMARY KEY (category_id),
    CONSTRAINT category_name_uq UNIQUE (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- The links: one row per (actor, film) and per (film, category).
CREATE TABLE film_actor (
    actor_id     INT          NOT NULL,
    film_id      INT          NOT NULL,
    billing      SMALLINT     NULL,
    PRIMARY KEY (actor_id, film_id),
    KEY film_actor_film_idx (film_id),
    CONSTRAINT film_actor_actor_fk FOREIGN KEY (actor_id) REFERENCES actor (actor_id),
    CONSTRAINT film_actor_film_fk  FOREIGN KEY (film_id)  REFERENCES film (film_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE film_category (
    film_id      INT          NOT NULL,
    category_id  SMALLINT     NOT NULL,
    PRIMARY KEY (film_id, category_id),
    CONSTRAINT film_category_film_fk     FOREIGN KEY (film_id)     REFERENCES film (film_id),
    CONSTRAINT film_category_category_fk FOREIGN KEY (category_id) REFERENCES category (category_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
