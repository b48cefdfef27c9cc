-- service_orders: customers, products and service orders (MariaDB 10.11 / MySQL 8).
-- Runs in the current database; safe to re-run (drops children first).

SET NAMES utf8mb4;
SET @old_sql_notes = @@sql_notes, sql_notes = 0;

DROP TABLE IF EXISTS service_order;
DROP TABLE IF EXISTS product;
DROP TABLE IF EXISTS customer;

SET sql_notes = @old_sql_notes;

CREATE TABLE customer (
    customer_id  INT          NOT NULL,
    name         VARCHAR(80)  NOT NULL,
    phone        VARCHAR(24)  NOT NULL,
    email        VARCHAR(120) NULL,
    city         VARCHAR(60)  NULL,
    PRIMARY KEY (customer_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE product (
    product_code VARCHAR(8)    NOT NULL,
    name         VARCHAR(80)   NOT NULL,
    category     VARCHAR(40)   NOT NULL,
    unit_price   NUMERIC(10,2) NOT NULL,
    PRIMARY KEY (product_code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE service_order (
    order_id     INT           NOT NULL,
    product_code VARCHAR(8)    NOT NULL,
    customer_id  INT           NOT NULL,
    ordered_at   DATETIME      NOT NULL,
    status       VARCHAR(16)   NOT NULL,
    quantity     INT           NOT NULL,
    amount       NUMERIC(10,2) NOT NULL,
    notes        TEXT          NULL,
    PRIMARY KEY (order_id),
    KEY service_order_product_idx (product_code),
    KEY service_order_customer_idx (customer_id),
    CONSTRAINT service_order_product_fk  FOREIGN KEY (product_code) REFERENCES product (product_code),
    CONSTRAINT service_order_customer_fk FOREIGN KEY (customer_id)  REFERENCES customer (customer_id),
    CONSTRAINT service_order_status_ck   CHECK (status IN ('open', 'shipped', 'closed', 'cancelled'))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
