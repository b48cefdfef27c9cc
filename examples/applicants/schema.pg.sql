-- applicants: applicants' answers to questions, with answer history (PostgreSQL 15).
-- Every revision of an answer is a separate row; answered_at is part of the key.
-- Runs in the current database; safe to re-run (drops children first).

SET client_min_messages = warning;

DROP TABLE IF EXISTS answer;
DROP TABLE IF EXISTS question;
DROP TABLE IF EXISTS applicant;

CREATE TABLE applicant (
    applicant_id INT          NOT NULL,
    name         VARCHAR(80)  NOT NULL,
    email        VARCHAR(120) NULL,
    PRIMARY KEY (applicant_id)
);

CREATE TABLE question (
    question_id  INT          NOT NULL,
    text         VARCHAR(200) NOT NULL,
    PRIMARY KEY (question_id)
);

CREATE TABLE answer (
    applicant_id INT          NOT NULL,
    question_id  INT          NOT NULL,
    answered_at  TIMESTAMP    NOT NULL,
    answer       TEXT         NOT NULL,
    PRIMARY KEY (applicant_id, question_id, answered_at),
    CONSTRAINT answer_applicant_fk FOREIGN KEY (applicant_id) REFERENCES applicant (applicant_id),
    CONSTRAINT answer_question_fk  FOREIGN KEY (question_id)  REFERENCES question (question_id)
);

CREATE INDEX answer_question_idx ON answer (question_id);

RESET client_min_messages;
