-- bench shop schema (MariaDB 10.11). Same tables, columns, types and keys as
-- schema.pg.sql; InnoDB clusters rows by primary key, so the keys are here
-- from the start (bench/gen.sh inserts in key order) and foreign keys are
-- checked off during the load.
SET NAMES utf8mb4;
SET foreign_key_checks = 0;
DROP TABLE IF EXISTS order_line, orders, product, customer, voucher_use, voucher, payment,
  bench_first, bench_last, bench_city, bench_word, bench_n;

CREATE TABLE customer (
    customer_id  INT           NOT NULL,
    name         VARCHAR(80)   NOT NULL,
    email        VARCHAR(120)  NULL,
    phone        VARCHAR(24)   NULL,
    city         VARCHAR(60)   NULL,
    country      CHAR(2)       NOT NULL,
    vip          BOOLEAN       NOT NULL,
    created_at   DATETIME      NOT NULL,
    PRIMARY KEY (customer_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE product (
    product_id   INT           NOT NULL,
    sku          VARCHAR(16)   NOT NULL,
    name         VARCHAR(120)  NOT NULL,
    category     VARCHAR(40)   NOT NULL,
    price        NUMERIC(10,2) NOT NULL,
    PRIMARY KEY (product_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE orders (
    order_id     INT           NOT NULL,
    customer_id  INT           NOT NULL,
    ordered_at   DATETIME      NOT NULL,
    status       VARCHAR(16)   NOT NULL,
    channel      VARCHAR(12)   NOT NULL,
    total        NUMERIC(10,2) NOT NULL,
    shipped_at   DATETIME      NULL,
    gift         BOOLEAN       NOT NULL,
    note         TEXT          NULL,
    PRIMARY KEY (order_id),
    KEY orders_customer_idx (customer_id),
    CONSTRAINT orders_customer_fk FOREIGN KEY (customer_id) REFERENCES customer (customer_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

CREATE TABLE order_line (
    order_id     INT           NOT NULL,
    line_no      SMALLINT      NOT NULL,
    product_id   INT           NOT NULL,
    quantity     INT           NOT NULL,
    unit_price   NUMERIC(10,2) NOT NULL,
    discount     NUMERIC(10,2) NULL,
    note         VARCHAR(200)  NULL,
    PRIMARY KEY (order_id, line_no),
    KEY order_line_product_idx (product_id),
    CONSTRAINT order_line_order_fk   FOREIGN KEY (order_id)   REFERENCES orders (order_id),
    CONSTRAINT order_line_product_fk FOREIGN KEY (product_id) REFERENCES product (product_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The text-keyed tables (bench/text_key.yaml): vouchers keyed by a code,
-- and their uses, linked by the code; in MariaDB's default utf8mb4
-- collation (case-insensitive, PAD SPACE), as a new database has it.
CREATE TABLE voucher (
    code         VARCHAR(24)   NOT NULL,
    order_id     INT           NOT NULL,
    amount       NUMERIC(10,2) NOT NULL,
    issued_at    DATETIME      NOT NULL,
    PRIMARY KEY (code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;

CREATE TABLE voucher_use (
    use_id       INT           NOT NULL,
    code         VARCHAR(24)   NOT NULL,
    used_at      DATETIME      NOT NULL,
    amount       NUMERIC(10,2) NOT NULL,
    PRIMARY KEY (use_id),
    KEY voucher_use_code_idx (code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_general_ci;

-- The typed table (bench/designs.yaml, design `typed`), loaded only by
-- bench/designs.sh (bench/gen.sh --payments). TIMESTAMP(6) is MariaDB's
-- instant type (PostgreSQL's timestamptz).
CREATE TABLE payment (
    payment_id   INT           NOT NULL,
    order_id     INT           NOT NULL,
    created_at   TIMESTAMP(6)  NOT NULL,
    authorized_at TIMESTAMP(6) NULL,
    settled_at   TIMESTAMP(6)  NULL,
    amount       NUMERIC(14,4) NOT NULL,
    fee          NUMERIC(12,6) NOT NULL,
    fx_rate      NUMERIC(18,10) NOT NULL,
    currency     CHAR(3)       NOT NULL,
    method       VARCHAR(20)   NOT NULL,
    reference    VARCHAR(64)   NOT NULL,
    description  TEXT          NOT NULL,
    response     TEXT          NULL,
    PRIMARY KEY (payment_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Lookup lists for the generator (bench/dict.sql fills them).
CREATE TABLE bench_first (i INT PRIMARY KEY, name VARCHAR(40) NOT NULL) DEFAULT CHARSET=utf8mb4;
CREATE TABLE bench_last (i INT PRIMARY KEY, name VARCHAR(40) NOT NULL) DEFAULT CHARSET=utf8mb4;
CREATE TABLE bench_city (i INT PRIMARY KEY, name VARCHAR(60) NOT NULL, country CHAR(2) NOT NULL) DEFAULT CHARSET=utf8mb4;
CREATE TABLE bench_word (i INT PRIMARY KEY, w VARCHAR(40) NOT NULL) DEFAULT CHARSET=utf8mb4;
CREATE TABLE bench_n (k INT PRIMARY KEY);
