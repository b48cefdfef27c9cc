-- Lookup lists of the bench shop generator: the same statements run on
-- PostgreSQL and MariaDB (plain SQL), so both engines pick from the same
-- lists. Sizes are used by gen.sql.in: first 40, last 40, city 32, word 64.
INSERT INTO bench_first (i, name) VALUES
 (0,'Ana'),(1,'José'),(2,'Zoë'),(3,'Łukasz'),(4,'Søren'),(5,'Chloé'),(6,'Jürgen'),(7,'Hana'),
 (8,'Wei'),(9,'Aigerim'),(10,'Oluwaseun'),(11,'Mårten'),(12,'Siobhán'),(13,'Dmitri'),(14,'Νίκος'),(15,'Дарья'),
 (16,'فاطمة'),(17,'花子'),(18,'Priya'),(19,'Ngozi'),(20,'Matías'),(21,'Björk'),(22,'Çağla'),(23,'Ewa'),
 (24,'Thomas'),(25,'Emily'),(26,'Olivia'),(27,'Liam'),(28,'Noah'),(29,'Sophie'),(30,'Mateo'),(31,'Yuki'),
 (32,'Kwame'),(33,'Amélie'),(34,'Ines'),(35,'Raúl'),(36,'Žofia'),(37,'Ioana'),(38,'Minh'),(39,'Sara');
INSERT INTO bench_last (i, name) VALUES
 (0,'Souza'),(1,'Müller'),(2,'Dubois'),(3,'Łukasiewicz'),(4,'Sørensen'),(5,'Takahashi'),(6,'Chen'),(7,'Peña'),
 (8,'Mensah'),(9,'Rossi'),(10,'O''Connor'),(11,'Nguyễn'),(12,'Kowalski'),(13,'Papadopoulos'),(14,'Иванова'),(15,'García'),
 (16,'Smith'),(17,'Johnson'),(18,'Yılmaz'),(19,'Novák'),(20,'Håkansson'),(21,'Fernández'),(22,'高橋'),(23,'김'),
 (24,'Okafor'),(25,'Schmidt'),(26,'Lefèvre'),(27,'Brown'),(28,'Silva'),(29,'Andersson'),(30,'Petrović'),(31,'Virtanen'),
 (32,'Nakamura'),(33,'Kaur'),(34,'Al-Sayed'),(35,'Moreau'),(36,'Esposito'),(37,'Jensen'),(38,'Walsh'),(39,'de la Cruz');
INSERT INTO bench_city (i, name, country) VALUES
 (0,'São Paulo','BR'),(1,'Boston','US'),(2,'Paris','FR'),(3,'Berlin','DE'),(4,'San Francisco','US'),(5,'Kraków','PL'),
 (6,'東京','JP'),(7,'København','DK'),(8,'Madrid','ES'),(9,'Accra','GH'),(10,'Roma','IT'),(11,'Zürich','CH'),
 (12,'Москва','RU'),(13,'Αθήνα','GR'),(14,'İstanbul','TR'),(15,'Lagos','NG'),(16,'México','MX'),(17,'Montréal','CA'),
 (18,'Göteborg','SE'),(19,'Reykjavík','IS'),(20,'Dublin','IE'),(21,'Praha','CZ'),(22,'서울','KR'),(23,'Mumbai','IN'),
 (24,'Sydney','AU'),(25,'Buenos Aires','AR'),(26,'Lisboa','PT'),(27,'Wien','AT'),(28,'Helsinki','FI'),(29,'Beograd','RS'),
 (30,'Québec','CA'),(31,'Nairobi','KE');
INSERT INTO bench_word (i, w) VALUES
 (0,'router'),(1,'cable'),(2,'adapter'),(3,'Kabel'),(4,'câble'),(5,'ケーブル'),(6,'switch'),(7,'modem'),
 (8,'antenna'),(9,'Antenne'),(10,'repeater'),(11,'bracket'),(12,'charger'),(13,'Ladegerät'),(14,'chargeur'),(15,'充電器'),
 (16,'fast'),(17,'schnell'),(18,'rápido'),(19,'rapide'),(20,'blue'),(21,'grün'),(22,'rouge'),(23,'negro'),
 (24,'mini'),(25,'pro'),(26,'max'),(27,'ultra'),(28,'kit'),(29,'set'),(30,'pack'),(31,'Paket'),
 (32,'please'),(33,'bitte'),(34,'por favor'),(35,'s''il vous plaît'),(36,'deliver'),(37,'liefern'),(38,'entregar'),(39,'livrer'),
 (40,'before'),(41,'vor'),(42,'antes de'),(43,'avant'),(44,'noon'),(45,'Mittag'),(46,'mediodía'),(47,'midi'),
 (48,'ring'),(49,'klingeln'),(50,'gate'),(51,'Tor'),(52,'porch'),(53,'Nachbar'),(54,'vecino'),(55,'voisin'),
 (56,'fragile'),(57,'zerbrechlich'),(58,'frágil'),(59,'gift'),(60,'Geschenk'),(61,'regalo'),(62,'cadeau'),(63,'贈り物');
INSERT INTO bench_n (k) VALUES (1),(2),(3),(4),(5),(6),(7),(8),(9);
