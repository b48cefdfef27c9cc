-- service_orders: customers, products and service orders (PostgreSQL 15).
-- Runs in the current database; safe to re-run (drops children first).

SET client_min_messages = warning;

DROP TABLE IF EXISTS service_order;
DROP TABLE IF EXISTS product;
DROP TABLE IF EXISTS customer;

CREATE TABLE customer (
    customer_id  INT          NOT NULL,
    name         VARCHAR(80)  NOT NULL,
    phone        VARCHAR(24)  NOT NULL,
    email        VARCHAR(120) NULL,
    city         VARCHAR(60)  NULL,
    PRIMARY KEY (customer_id)
);

CREATE TABLE product (
    product_code VARCHAR(8)    NOT NULL,
    name         VARCHAR(80)   NOT NULL,
    category     VARCHAR(40)   NOT NULL,
    unit_price   NUMERIC(10,2) NOT NULL,
    PRIMARY KEY (product_code)
);

CREATE TABLE service_order (
    order_id     INT           NOT NULL,
    product_code VARCHAR(8)    NOT NULL,
    customer_id  INT           NOT NULL,
    ordered_at   TIMESTAMP     NOT NULL,
    status       VARCHAR(16)   NOT NULL,
    quantity     INT           NOT NULL,
    amount       NUMERIC(10,2) NOT NULL,
    notes        TEXT          NULL,
    PRIMARY KEY (order_id),
    CONSTRAINT service_order_product_fk  FOREIGN KEY (product_code) REFERENCES product (product_code),
    CONSTRAINT service_order_customer_fk FOREIGN KEY (customer_id)  REFERENCES customer (customer_id),
    CONSTRAINT service_order_status_ck   CHECK (status IN ('open', 'shipped', 'closed', 'cancelled'))
);

CREATE INDEX service_order_product_idx  ON service_order (product_code);
CREATE INDEX service_order_customer_idx ON service_order (customer_id);

RESET client_min_messages;
