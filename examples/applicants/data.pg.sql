-- applicants: example data (PostgreSQL 15). Load after schema.pg.sql.
-- Deterministic; identical content to data.mysql.sql. Timestamps are UTC.
-- Rows: applicant=8, question=5, answer=40

SET client_encoding = 'UTF8';

BEGIN;

INSERT INTO applicant (applicant_id, name, email) VALUES
  (1, 'Amélie Laurent', 'amelie.laurent@example.fr'),
  (2, 'Ben Okafor', 'ben.okafor@example.ng'),
  (3, 'Carmen Ibáñez', 'carmen.ibanez@example.es'),
  (4, 'Dmitri Volkov', 'd.volkov@example.org'),
  (5, 'Eilidh MacLeod', 'eilidh.macleod@example.co.uk'),
  (6, 'Farah Haddad', NULL),
  (7, 'Gábor Szűcs', 'gabor.szucs@example.hu'),
  (8, 'Hiroshi Sato', 'hiroshi.sato@example.jp');

INSERT INTO question (question_id, text) VALUES
  (1, 'Why do you want to join our team?'),
  (2, 'Describe a project you''re proud of.'),
  (3, 'What is your earliest possible start date?'),
  (4, 'Which programming languages are you most comfortable with?'),
  (5, 'Is there anything else you would like us to know?');

INSERT INTO answer (applicant_id, question_id, answered_at, answer) VALUES
  (1, 1, '2024-03-01 09:12:00', 'I''ve followed your work on open data for years and want to contribute.'),
  (1, 1, '2024-03-02 18:40:10', 'I have followed your open-data work for years and would love to help ship it.'),
  (1, 2, '2024-03-01 09:25:31', 'A bike-sharing dashboard for Lyon, built with a team of three.'),
  (1, 3, '2024-03-01 09:27:02', '2024-05-01'),
  (1, 3, '2024-03-04 08:00:00', '2024-04-15'),
  (1, 3, '2024-03-06 12:30:45', 'Immédiatement — je suis disponible dès maintenant.'),
  (1, 4, '2024-03-01 09:29:40', 'Python, SQL, a little Rust.'),
  (2, 1, '2024-03-03 14:00:00', 'Your mission statement resonated with me.'),
  (2, 2, '2024-03-03 14:10:12', 'At my last job I led the rewrite of our order-tracking service. The old system was a single PHP application that timed out during every sales peak. We split it into three services, moved the hot paths to Go, and added proper load tests to CI. Peak latency went from 9 s to under 300 ms, and we have not had a holiday-season outage since. I also mentored two junior developers through the project; both now own parts of the system.'),
  (2, 4, '2024-03-03 14:15:00', 'Go and TypeScript.'),
  (2, 4, '2024-03-05 10:05:05', 'Go, TypeScript and C++.'),
  (2, 5, '2024-03-03 14:16:30', 'I play the saxophone 🎷 in a community band.'),
  (3, 1, '2024-03-07 20:01:00', 'Quiero trabajar en un equipo internacional.'),
  (3, 2, '2024-03-07 20:15:00', 'Migré el sistema de facturación de una pyme a PostgreSQL.'),
  (3, 2, '2024-03-08 07:45:00', 'Migré el sistema de facturación de una pyme de Access a PostgreSQL, sin pérdida de datos.'),
  (3, 2, '2024-03-10 22:10:59', 'Migré el sistema de facturación de una pyme de Access a PostgreSQL, sin pérdida de datos, y reduje el cierre mensual de 3 días a 4 horas.'),
  (3, 3, '2024-03-07 20:20:00', 'June 2024'),
  (3, 4, '2024-03-07 20:22:30', 'Java, Kotlin, SQL'),
  (3, 5, '2024-03-07 20:25:00', 'No.'),
  (4, 1, '2024-03-09 11:00:00', 'Remote-first culture.'),
  (4, 3, '2024-03-09 11:02:00', 'Two weeks after an offer.'),
  (4, 4, '2024-03-09 11:03:00', 'C++, C, Python'),
  (4, 4, '2024-03-09 11:04:30', 'C++17/20, C, Python'),
  (5, 1, '2024-03-12 08:30:00', 'I want to work on tools that other engineers rely on.'),
  (5, 2, '2024-03-12 08:50:00', 'Built a ferry-timetable app used across the Hebrides.'),
  (5, 3, '2024-03-12 08:52:00', '1 May 2024'),
  (5, 3, '2024-03-20 17:00:00', '3 June 2024 (notice period extended)'),
  (5, 4, '2024-03-12 08:53:00', 'Swift, Kotlin, some Haskell.'),
  (5, 5, '2024-03-12 08:55:00', 'I''m based in Inverness and happy to travel monthly.'),
  (6, 1, '2024-03-14 16:00:00', 'Career change from data analysis to engineering.'),
  (6, 2, '2024-03-14 16:20:00', 'Automated a weekly 40-page report; it now runs in 2 minutes.'),
  (6, 4, '2024-03-14 16:25:00', 'R, SQL'),
  (6, 4, '2024-03-18 09:00:00', 'R, SQL, Python'),
  (6, 4, '2024-03-25 13:37:00', 'R, SQL, Python (just finished an online course on pandas).'),
  (7, 1, '2024-03-16 19:45:00', 'Szeretnék nagy forgalmú rendszereken dolgozni. (I want to work on high-traffic systems.)'),
  (7, 2, '2024-03-16 20:05:00', 'A payment gateway handling 1,200 requests per second.'),
  (7, 3, '2024-03-16 20:06:00', 'Negotiable.'),
  (7, 5, '2024-03-16 20:07:00', ''),
  (8, 1, '2024-03-20 06:00:00', 'チームで学びながら成長したいです。'),
  (8, 4, '2024-03-20 06:05:00', 'TypeScript');

COMMIT;
