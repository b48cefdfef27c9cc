-- films: example data (MariaDB 10.11 / MySQL 8). Load after schema.mysql.sql.
-- Deterministic; identical content to data.pg.sql. Invented films and people.
-- Rows: language=3, film=6, actor=8, category=5, film_actor=13, film_category=9
-- Film 6 has no actors, actor 8 no films, category 4 no films; actor 5 has no
-- last name, film 5 no release year.

SET NAMES utf8mb4;

START TRANSACTION;

INSERT INTO language (language_id, name) VALUES
  (1, 'English'),
  (2, 'Italiano'),
  (3, '日本語');

INSERT INTO film (film_id, title, release_year, language_id) VALUES
  (1, 'Harbor Lights', 2011, 1),
  (2, 'The Quiet Orchard', 2015, 1),
  (3, 'Notte di Vetro', 2009, 2),
  (4, 'Paper Cranes at Dawn', 2019, 3),
  (5, 'Last Train to Merrow', NULL, 1),
  (6, 'Untitled Short', 2023, 1);

INSERT INTO actor (actor_id, first_name, last_name) VALUES
  (1, 'Ada', 'Brennan'),
  (2, 'Tomás', 'Ferreira'),
  (3, 'Giulia', 'Marchetti'),
  (4, 'Kenji', 'Watanabe'),
  (5, 'Zephyr', NULL),
  (6, 'Maren', 'Holt'),
  (7, 'Olu', 'Adeyemi'),
  (8, 'Priya', 'Raman');

INSERT INTO category (category_id, name) VALUES
  (1, 'Drama'),
  (2, 'Comedy'),
  (3, 'Sci-Fi'),
  (4, 'Documentary'),
  (5, 'Family');

INSERT INTO film_actor (actor_id, film_id, billing) VALUES
  (1, 1, 1),
  (2, 1, 2),
  (6, 1, NULL),
  (1, 2, 2),
  (6, 2, 1),
  (7, 2, 3),
  (3, 3, 1),
  (2, 3, 2),
  (4, 4, 1),
  (5, 4, 2),
  (5, 5, 1),
  (7, 5, 2),
  (1, 5, 3);

INSERT INTO film_category (film_id, category_id) VALUES
  (1, 1),
  (2, 1),
  (2, 5),
  (3, 1),
  (4, 3),
  (4, 5),
  (5, 2),
  (5, 3),
  (6, 2);

COMMIT;
