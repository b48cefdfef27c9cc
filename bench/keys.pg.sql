-- Keys and indexes of the bench shop (PostgreSQL), added after the load.
ALTER TABLE customer   ADD PRIMARY KEY (customer_id);
ALTER TABLE product    ADD PRIMARY KEY (product_id);
ALTER TABLE orders     ADD PRIMARY KEY (order_id);
ALTER TABLE order_line ADD PRIMARY KEY (order_id, line_no);
CREATE INDEX orders_customer_idx    ON orders (customer_id);
CREATE INDEX order_line_product_idx ON order_line (product_id);
ALTER TABLE orders     ADD CONSTRAINT orders_customer_fk    FOREIGN KEY (customer_id) REFERENCES customer (customer_id);
ALTER TABLE order_line ADD CONSTRAINT order_line_order_fk   FOREIGN KEY (order_id)    REFERENCES orders (order_id);
ALTER TABLE order_line ADD CONSTRAINT order_line_product_fk FOREIGN KEY (product_id)  REFERENCES product (product_id);
ALTER TABLE voucher     ADD PRIMARY KEY (code);
ALTER TABLE payment     ADD PRIMARY KEY (payment_id);
ALTER TABLE voucher_use ADD PRIMARY KEY (use_id);
CREATE INDEX voucher_use_code_idx ON voucher_use (code);
DROP TABLE bench_first, bench_last, bench_city, bench_word, bench_n;
VACUUM (ANALYZE, FREEZE);
