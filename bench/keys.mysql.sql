-- After the load (MariaDB): foreign keys back on, lookup lists dropped, stats.
SET foreign_key_checks = 1;
DROP TABLE bench_first, bench_last, bench_city, bench_word, bench_n;
ANALYZE TABLE customer, product, orders, order_line, voucher, voucher_use, payment;
