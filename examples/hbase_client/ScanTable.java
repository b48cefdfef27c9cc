import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

// Reads a table widen loaded with HBase's own Java client (README, "Reading
// the tables with HBase's Java client"): the first ROWS rows (default 3),
// one line per cell (row, column, timestamp, value; bytes shown by
// Bytes.toStringBinary, as `widen scan` shows them). Run it with Java 17's
// source launcher:
//   java -cp CONF_DIR:JARS ScanTable.java NS:TABLE [ROWS]
public class ScanTable {
  public static void main(String[] args) throws Exception {
    Scan scan = new Scan().setLimit(args.length > 1 ? Integer.parseInt(args[1]) : 3);
    try (Connection c = ConnectionFactory.createConnection(HBaseConfiguration.create());
        Table t = c.getTable(TableName.valueOf(args[0]));
        ResultScanner rows = t.getScanner(scan)) {
      for (Result r : rows) {
        for (Cell cell : r.rawCells()) {
          System.out.println(Bytes.toStringBinary(CellUtil.cloneRow(cell)) + " column="
              + Bytes.toStringBinary(CellUtil.cloneFamily(cell)) + ":"
              + Bytes.toStringBinary(CellUtil.cloneQualifier(cell)) + ", timestamp="
              + cell.getTimestamp() + ", value=" + Bytes.toStringBinary(CellUtil.cloneValue(cell)));
        }
      }
    }
  }
}
