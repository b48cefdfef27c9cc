-- The shop of shop.yaml for PostgreSQL: every table's updated_at is raised
-- by a trigger on each insert and update (a default alone would raise it
-- on insert only, and `widen sync` would never see the updates).
CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS
  $$ BEGIN NEW.updated_at := clock_timestamp(); RETURN NEW; END $$;

CREATE TABLE customer (
  customer_id int PRIMARY KEY,
  name text NOT NULL,
  city text,
  updated_at timestamptz(6) NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE orders (
  order_id int PRIMARY KEY,
  customer_id int NOT NULL REFERENCES customer,
  status text NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  updated_at timestamptz(6) NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE order_line (
  order_id int NOT NULL REFERENCES orders,
  line_no int NOT NULL,
  product text NOT NULL,
  quantity int NOT NULL,
  updated_at timestamptz(6) NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (order_id, line_no)
);
CREATE INDEX ON customer (updated_at);
CREATE INDEX ON orders (updated_at);
CREATE INDEX ON order_line (updated_at);
CREATE TRIGGER customer_touch BEFORE INSERT OR UPDATE ON customer
  FOR EACH ROW EXECUTE FUNCTION touch();
CREATE TRIGGER orders_touch BEFORE INSERT OR UPDATE ON orders
  FOR EACH ROW EXECUTE FUNCTION touch();
CREATE TRIGGER order_line_touch BEFORE INSERT OR UPDATE ON order_line
  FOR EACH ROW EXECUTE FUNCTION touch();

INSERT INTO customer VALUES (1, 'Ada', 'Leeds'), (2, 'Bo', 'Turku'), (3, 'Cy', NULL);
INSERT INTO orders (order_id, customer_id, status) VALUES
  (101, 1, 'paid'), (102, 1, 'new'), (103, 2, 'shipped'), (104, 3, 'new');
INSERT INTO order_line (order_id, line_no, product, quantity) VALUES
  (101, 1, 'kettle', 1), (101, 2, 'mug', 4), (102, 1, 'teapot', 1),
  (103, 1, 'mug', 2), (104, 1, 'tray', 1), (104, 2, 'spoon', 6);
