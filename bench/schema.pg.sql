-- bench shop schema (PostgreSQL 15). Tables are created without keys;
-- bench/gen.sh loads them and then runs keys.pg.sql (bulk loads are faster
-- into heaps without indexes). Keep in step with schema.mysql.sql: the same
-- tables, columns, types and keys.
SET client_min_messages = warning;
DROP TABLE IF EXISTS order_line, orders, product, customer, voucher_use, voucher, payment,
  bench_first, bench_last, bench_city, bench_word, bench_n CASCADE;

CREATE TABLE customer (
    customer_id  INT           NOT NULL,
    name         VARCHAR(80)   NOT NULL,
    email        VARCHAR(120)  NULL,
    phone        VARCHAR(24)   NULL,
    city         VARCHAR(60)   NULL,
    country      CHAR(2)       NOT NULL,
    vip          BOOLEAN       NOT NULL,
    created_at   TIMESTAMP     NOT NULL
);

CREATE TABLE product (
    product_id   INT           NOT NULL,
    sku          VARCHAR(16)   NOT NULL,
    name         VARCHAR(120)  NOT NULL,
    category     VARCHAR(40)   NOT NULL,
    price        NUMERIC(10,2) NOT NULL
);

CREATE TABLE orders (
    order_id     INT           NOT NULL,
    customer_id  INT           NOT NULL,
    ordered_at   TIMESTAMP     NOT NULL,
    status       VARCHAR(16)   NOT NULL,
    channel      VARCHAR(12)   NOT NULL,
    total        NUMERIC(10,2) NOT NULL,
    shipped_at   TIMESTAMP     NULL,
    gift         BOOLEAN       NOT NULL,
    note         TEXT          NULL
);

CREATE TABLE order_line (
    order_id     INT           NOT NULL,
    line_no      SMALLINT      NOT NULL,
    product_id   INT           NOT NULL,
    quantity     INT           NOT NULL,
    unit_price   NUMERIC(10,2) NOT NULL,
    discount     NUMERIC(10,2) NULL,
    note         VARCHAR(200)  NULL
);

-- The text-keyed tables (bench/text_key.yaml): vouchers keyed by a code,
-- and their uses, linked by the code.
CREATE TABLE voucher (
    code         VARCHAR(24)   NOT NULL,
    order_id     INT           NOT NULL,
    amount       NUMERIC(10,2) NOT NULL,
    issued_at    TIMESTAMP     NOT NULL
);

CREATE TABLE voucher_use (
    use_id       INT           NOT NULL,
    code         VARCHAR(24)   NOT NULL,
    used_at      TIMESTAMP     NOT NULL,
    amount       NUMERIC(10,2) NOT NULL
);

-- The typed table (bench/designs.yaml, design `typed`): one payment per
-- order, loaded only by bench/designs.sh (bench/gen.sh --payments): time
-- zones, exact decimals and long text, the columns whose values cost most to
-- produce and read.
CREATE TABLE payment (
    payment_id   INT           NOT NULL,
    order_id     INT           NOT NULL,
    created_at   TIMESTAMPTZ   NOT NULL,
    authorized_at TIMESTAMPTZ  NULL,
    settled_at   TIMESTAMPTZ   NULL,
    amount       NUMERIC(14,4) NOT NULL,
    fee          NUMERIC(12,6) NOT NULL,
    fx_rate      NUMERIC(18,10) NOT NULL,
    currency     CHAR(3)       NOT NULL,
    method       VARCHAR(20)   NOT NULL,
    reference    VARCHAR(64)   NOT NULL,
    description  TEXT          NOT NULL,
    response     TEXT          NULL
);

-- Lookup lists for the generator (bench/dict.sql fills them).
CREATE TABLE bench_first (i INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
CREATE TABLE bench_last (i INT PRIMARY KEY, name VARCHAR(40) NOT NULL);
CREATE TABLE bench_city (i INT PRIMARY KEY, name VARCHAR(60) NOT NULL, country CHAR(2) NOT NULL);
CREATE TABLE bench_word (i INT PRIMARY KEY, w VARCHAR(40) NOT NULL);
CREATE TABLE bench_n (k INT PRIMARY KEY);
RESET client_min_messages;
