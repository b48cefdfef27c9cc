-- The shop of shop.yaml for MySQL/MariaDB: ON UPDATE CURRENT_TIMESTAMP(6)
-- raises every table's updated_at on each update (and the default on each
-- insert), so `widen sync` sees every change.
CREATE TABLE customer (
  customer_id int PRIMARY KEY,
  name varchar(40) NOT NULL,
  city varchar(40),
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  INDEX (updated_at)
);
CREATE TABLE orders (
  order_id int PRIMARY KEY,
  customer_id int NOT NULL REFERENCES customer (customer_id),
  status varchar(20) NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  INDEX (updated_at)
);
CREATE TABLE order_line (
  order_id int NOT NULL,
  line_no int NOT NULL,
  product varchar(40) NOT NULL,
  quantity int NOT NULL,
  updated_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6),
  PRIMARY KEY (order_id, line_no),
  INDEX (updated_at)
);

INSERT INTO customer (customer_id, name, city) VALUES (1, 'Ada', 'Leeds'), (2, 'Bo', 'Turku'), (3, 'Cy', NULL);
INSERT INTO orders (order_id, customer_id, status) VALUES
  (101, 1, 'paid'), (102, 1, 'new'), (103, 2, 'shipped'), (104, 3, 'new');
INSERT INTO order_line (order_id, line_no, product, quantity) VALUES
  (101, 1, 'kettle', 1), (101, 2, 'mug', 4), (102, 1, 'teapot', 1),
  (103, 1, 'mug', 2), (104, 1, 'tray', 1), (104, 2, 'spoon', 6);
