-- applicants: applicants' answers to questions, with answer history (MariaDB 10.11 / MySQL 8).
-- Every revision of an answer is a separate row; answered_at is part of the key.
-- Runs in the current database; safe to re-run (drops children first).

SET NAMES utf8mb4;
SET @old_sql_notes = @@sql_notes, sql_notes = 0;

DROP TABLE IF EXISTS answer;
DROP TABLE IF EXISTS question;
DROP TABLE IF EXISTS applicant;

SET sql_notes = @old_sql_notes;

CREATE TABLE applicant (
    applicant_id INT          NOT NULL,
    name         VARCHAR(80)  NOT NULL,
    email        VARCHAR(120) NULL,
    PRIMARY KEY (applicant_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE question (
    question_id  INT          NOT NULL,
    text         VARCHAR(200) NOT NULL,
    PRIMARY KEY (question_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE answer (
    applicant_id INT          NOT NULL,
    question_id  INT          NOT NULL,
    answered_at  DATETIME     NOT NULL,
    answer       TEXT         NOT NULL,
    PRIMARY KEY (applicant_id, question_id, answered_at),
    KEY answer_question_idx (question_id),
    CONSTRAINT answer_applicant_fk FOREIGN KEY (applicant_id) REFERENCES applicant (applicant_id),
    CONSTRAINT answer_question_fk  FOREIGN KEY (question_id)  REFERENCES question (question_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
