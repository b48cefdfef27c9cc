-- service_orders: example data (MariaDB 10.11 / MySQL 8). Load after schema.mysql.sql.
-- Deterministic; identical content to data.pg.sql. Timestamps are UTC.
-- Rows: customer=12, product=6, service_order=40

SET NAMES utf8mb4;

START TRANSACTION;

INSERT INTO customer (customer_id, name, phone, email, city) VALUES
  (1, 'Ana Souza', '+55 11 98765-4321', 'ana.souza@example.com.br', 'São Paulo'),
  (2, 'Brian O''Connor', '+1 617 555 0142', 'brian.oconnor@example.com', 'Boston'),
  (3, 'Chloé Dubois', '+33 1 42 68 53 00', 'chloe.dubois@example.fr', 'Paris'),
  (4, 'Dieter Müller', '+49 30 1234567', NULL, 'Berlin'),
  (5, 'Emily Chen', '+1 415 555 0199', 'emily.chen@example.com', 'San Francisco'),
  (6, 'Fatima Al-Sayed', '+971 4 555 0123', 'fatima.alsayed@example.ae', NULL),
  (7, 'Grzegorz Łukasiewicz', '+48 22 555 01 77', 'g.lukasiewicz@example.pl', 'Kraków'),
  (8, 'Hana Takahashi (高橋 花)', '+81 3-5555-0108', 'hana.t@example.jp', '東京'),
  (9, 'Ingrid Sørensen', '+45 33 12 34 56', NULL, 'København'),
  (10, 'Jorge Peña', '+34 912 345 678', 'jorge.pena@example.es', 'Madrid'),
  (11, 'Kwame Mensah', '+233 30 255 0111', 'kwame.mensah@example.com.gh', 'Accra'),
  (12, 'Laura Rossi', '+39 06 5555 0123', 'laura.rossi@example.it', NULL);

INSERT INTO product (product_code, name, category, unit_price) VALUES
  ('A100', 'Standard Router', 'networking', 89.90),
  ('A200', 'Mesh Wi-Fi Kit (3 nodes)', 'networking', 249.00),
  ('B150', 'Fiber Installation', 'installation', 120.00),
  ('B250', 'On-site Support Visit', 'support', 75.50),
  ('C300', 'Annual Maintenance Plan', 'maintenance', 399.99),
  ('C310', 'Smart Home Hub', 'devices', 59.95);

INSERT INTO service_order (order_id, product_code, customer_id, ordered_at, status, quantity, amount, notes) VALUES
  (1001, 'A100', 5, '2024-01-08 09:14:02', 'closed', 1, 89.90, NULL),
  (1002, 'B150', 5, '2024-01-08 09:20:45', 'closed', 1, 120.00, 'Install together with the router from order 1001.'),
  (1003, 'C310', 1, '2024-01-15 14:03:11', 'closed', 2, 119.90, 'Entregar na portaria, por favor.'),
  (1004, 'A200', 3, '2024-01-22 18:47:30', 'closed', 1, 249.00, NULL),
  (1005, 'B250', 2, '2024-02-02 08:05:00', 'closed', 1, 75.50, 'Customer''s modem keeps rebooting overnight; check the power supply.'),
  (1006, 'C300', 5, '2024-02-10 11:30:19', 'closed', 1, 359.99, '10% loyalty discount applied.'),
  (1007, 'A100', 7, '2024-02-14 07:59:59', 'cancelled', 1, 89.90, 'Duplicate of order 1008.'),
  (1008, 'A100', 7, '2024-02-14 08:01:12', 'closed', 1, 89.90, NULL),
  (1009, 'C310', 4, '2024-02-29 23:10:05', 'closed', 3, 179.85, 'Leap-day order.'),
  (1010, 'B150', 10, '2024-03-04 10:00:00', 'closed', 1, 120.00, 'Instalación en el ático; acceso por la escalera de servicio.'),
  (1011, 'A200', 5, '2024-03-11 16:22:48', 'closed', 1, 249.00, NULL),
  (1012, 'B250', 8, '2024-03-19 02:14:33', 'closed', 2, 151.00, '夜間の訪問は不可。Weekday visits only.'),
  (1013, 'C300', 12, '2024-03-27 13:45:00', 'closed', 1, 399.99, NULL),
  (1014, 'C310', 6, '2024-04-03 09:09:09', 'cancelled', 1, 59.95, 'Customer changed their mind.'),
  (1015, 'A100', 9, '2024-04-12 12:30:00', 'closed', 1, 89.90, 'Leveringsadresse: Nørrebrogade 12, 3. sal.'),
  (1016, 'B150', 5, '2024-04-20 15:15:15', 'closed', 1, 120.00, NULL),
  (1017, 'C310', 5, '2024-05-01 10:10:10', 'closed', 4, 227.81, 'Bulk order for the new office 🏢 — 5% volume discount.'),
  (1018, 'A200', 2, '2024-05-09 19:41:27', 'closed', 1, 249.00, NULL),
  (1019, 'B250', 3, '2024-05-17 08:30:00', 'closed', 1, 75.50, 'Technicien : merci d''appeler 30 minutes avant l''arrivée.'),
  (1020, 'C300', 10, '2024-06-01 00:00:00', 'closed', 1, 399.99, 'Renewal of the 2023 plan.'),
  (1021, 'A100', 1, '2024-06-12 17:05:44', 'closed', 1, 89.90, NULL),
  (1022, 'C310', 7, '2024-06-25 11:11:11', 'closed', 2, 119.90, NULL),
  (1023, 'B150', 4, '2024-07-03 06:45:00', 'closed', 1, 120.00, 'Glasfaseranschluss im Keller, Schlüssel beim Hausmeister.'),
  (1024, 'A200', 5, '2024-07-15 13:00:01', 'closed', 2, 498.00, NULL),
  (1025, 'B250', 12, '2024-07-30 09:55:20', 'cancelled', 1, 75.50, NULL),
  (1026, 'C300', 3, '2024-08-08 08:08:08', 'closed', 1, 399.99, NULL),
  (1027, 'A100', 6, '2024-08-19 20:20:20', 'closed', 1, 89.90, 'The building has two entrances: use the north gate, then take the service lift to level 3. Security requires the technician''s full name and ID number 24 hours in advance, so please forward the assignment as soon as it is scheduled. Parking is available in bay 17 for up to two hours; longer visits must be registered at reception.'),
  (1028, 'C310', 8, '2024-09-02 10:30:00', 'shipped', 1, 59.95, NULL),
  (1029, 'B150', 5, '2024-09-10 14:14:14', 'shipped', 1, 120.00, NULL),
  (1030, 'A200', 10, '2024-09-21 09:00:00', 'shipped', 1, 249.00, NULL),
  (1031, 'C300', 1, '2024-10-01 12:00:00', 'shipped', 1, 339.99, 'Promo: 15% off maintenance plans (October).'),
  (1032, 'B250', 9, '2024-10-08 16:40:00', 'shipped', 1, 75.50, NULL),
  (1033, 'A100', 2, '2024-10-19 07:15:30', 'shipped', 3, 269.70, 'Spare routers for the branch office.'),
  (1034, 'C310', 5, '2024-10-28 22:05:00', 'open', 1, 59.95, NULL),
  (1035, 'B150', 12, '2024-11-04 09:30:00', 'open', 1, 120.00, 'Scheduling pending — customer is travelling.'),
  (1036, 'A200', 4, '2024-11-12 11:45:10', 'open', 1, 249.00, NULL),
  (1037, 'B250', 5, '2024-11-20 15:00:00', 'open', 1, 75.50, 'Follow-up of order 1029.'),
  (1038, 'C300', 7, '2024-11-28 08:20:00', 'open', 1, 399.99, NULL),
  (1039, 'A100', 3, '2024-12-05 18:00:00', 'open', 2, 179.80, NULL),
  (1040, 'C310', 5, '2024-12-31 23:59:59', 'open', 1, 59.95, 'Last order of the year.');

COMMIT;
