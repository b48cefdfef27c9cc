// HBaseBench: HBase's own Java client beside widen in bench/hbase.sh, on the
// same server and in the same run.
//
//   dump TABLE FILE            every version of every cell of TABLE into FILE
//   read FILE                  reads FILE and counts it (what `write` spends
//                              on reading, without writing)
//   write SRC DST FILE [MIB]   creates DST with SRC's descriptor and split
//                              points (dropping DST first), then writes FILE's
//                              cells into it through a BufferedMutator (write
//                              buffer MIB MiB, default HBase's 2), one Put per
//                              row; timed from the first mutate to the end of
//                              close(), which flushes
//   drop TABLE                 disables and deletes TABLE if it exists
//   split TABLE [ROW]          asks the master to split TABLE's regions (at
//                              ROW, given as Bytes.toStringBinary prints it)
//   regions TABLE              prints how many regions TABLE has
//
// The server is found from hbase-site.xml on the classpath (bench/hbase.sh
// puts the test HBase's conf directory first). Figures go to stdout as
// key=value words.
//
// FILE holds one record per cell, in the order the scan returned them (HBase
// cell order), big-endian as java.io.DataOutputStream writes them:
//
//   int row length | row | int family length | family |
//   int qualifier length | qualifier | long timestamp | int value length | value
//
// and ends with an int -1.
package widen.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

public final class HBaseBench {
  private HBaseBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 2) usage();
    if (args[0].equals("read")) {
      read(args[1]);
      return;
    }
    Configuration conf = HBaseConfiguration.create();
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      switch (args[0]) {
        case "dump":
          if (args.length != 3) usage();
          dump(conn, args[1], args[2]);
          break;
        case "write":
          if (args.length != 4 && args.length != 5) usage();
          write(conn, args[1], args[2], args[3], args.length == 5 ? Long.parseLong(args[4]) : 2);
          break;
        case "drop":
          drop(conn.getAdmin(), TableName.valueOf(args[1]));
          break;
        case "split":
          split(conn, args[1], args.length > 2 ? args[2] : null);
          break;
        case "regions":
          System.out.println("regions=" + conn.getAdmin().getRegions(TableName.valueOf(args[1])).size());
          break;
        default:
          usage();
      }
    }
  }

  private static void usage() {
    System.err.println(
        "usage: HBaseBench dump TABLE FILE | read FILE | write SRC DST FILE [MIB] | drop TABLE"
            + " | split TABLE [ROW] | regions TABLE");
    System.exit(2);
  }

  private static void dump(Connection conn, String table, String file) throws IOException {
    long cells = 0;
    long t0 = System.nanoTime();
    Scan scan = new Scan().readAllVersions().setCaching(1000);
    try (Table t = conn.getTable(TableName.valueOf(table));
        ResultScanner scanner = t.getScanner(scan);
        DataOutputStream out =
            new DataOutputStream(new BufferedOutputStream(new FileOutputStream(file), 1 << 20))) {
      for (Result r : scanner) {
        for (Cell c : r.rawCells()) {
          out.writeInt(c.getRowLength());
          out.write(c.getRowArray(), c.getRowOffset(), c.getRowLength());
          out.writeInt(c.getFamilyLength());
          out.write(c.getFamilyArray(), c.getFamilyOffset(), c.getFamilyLength());
          out.writeInt(c.getQualifierLength());
          out.write(c.getQualifierArray(), c.getQualifierOffset(), c.getQualifierLength());
          out.writeLong(c.getTimestamp());
          out.writeInt(c.getValueLength());
          out.write(c.getValueArray(), c.getValueOffset(), c.getValueLength());
          ++cells;
        }
      }
      out.writeInt(-1);
    }
    System.out.printf("cells=%d seconds=%.3f%n", cells, (System.nanoTime() - t0) / 1e9);
  }

  /** One cell of a dump; next() returns false at its end. */
  private static final class DumpReader implements AutoCloseable {
    final DataInputStream in;
    byte[] row, family, qualifier, value;
    long timestamp;

    DumpReader(String file) throws IOException {
      in = new DataInputStream(new BufferedInputStream(new FileInputStream(file), 1 << 20));
    }

    private byte[] bytes(int n) throws IOException {
      byte[] b = new byte[n];
      in.readFully(b);
      return b;
    }

    boolean next() throws IOException {
      int n = in.readInt();
      if (n < 0) return false;
      row = bytes(n);
      family = bytes(in.readInt());
      qualifier = bytes(in.readInt());
      timestamp = in.readLong();
      value = bytes(in.readInt());
      return true;
    }

    long bytes() {
      return row.length + family.length + qualifier.length + value.length;
    }

    @Override
    public void close() throws IOException {
      in.close();
    }
  }

  private static void read(String file) throws IOException {
    long cells = 0, bytes = 0;
    long t0 = System.nanoTime();
    try (DumpReader r = new DumpReader(file)) {
      while (r.next()) {
        ++cells;
        bytes += r.bytes();
      }
    }
    System.out.printf("cells=%d bytes=%d seconds=%.3f%n", cells, bytes, (System.nanoTime() - t0) / 1e9);
  }

  private static void drop(Admin admin, TableName name) throws IOException {
    if (!admin.tableExists(name)) return;
    if (admin.isTableEnabled(name)) admin.disableTable(name);
    admin.deleteTable(name);
  }

  private static void write(Connection conn, String src, String dst, String file, long mib)
      throws IOException {
    TableName from = TableName.valueOf(src), to = TableName.valueOf(dst);
    try (Admin admin = conn.getAdmin()) {
      drop(admin, to);
      TableDescriptor d = TableDescriptorBuilder.copy(to, admin.getDescriptor(from));
      List<byte[]> splits = new ArrayList<>();
      for (RegionInfo r : admin.getRegions(from)) {
        if (r.getStartKey().length > 0) splits.add(r.getStartKey());
      }
      splits.sort(Bytes.BYTES_COMPARATOR);
      if (splits.isEmpty()) {
        admin.createTable(d);
      } else {
        admin.createTable(d, splits.toArray(new byte[0][]));
      }
    }
    long cells = 0, bytes = 0, rows = 0;
    BufferedMutatorParams params = new BufferedMutatorParams(to).writeBufferSize(mib << 20);
    long t0 = System.nanoTime();
    try (DumpReader r = new DumpReader(file);
        BufferedMutator m = conn.getBufferedMutator(params)) {
      Put put = null;
      while (r.next()) {
        if (put == null || !Arrays.equals(put.getRow(), r.row)) {
          if (put != null) m.mutate(put);
          put = new Put(r.row);
          ++rows;
        }
        put.addColumn(r.family, r.qualifier, r.timestamp, r.value);
        ++cells;
        bytes += r.bytes();
      }
      if (put != null) m.mutate(put);
    } // close() flushes and waits
    double seconds = (System.nanoTime() - t0) / 1e9;
    System.out.printf(
        "cells=%d rows=%d bytes=%d seconds=%.3f cells_per_s=%.0f buffer_mib=%d%n",
        cells, rows, bytes, seconds, cells / seconds, mib);
  }

  private static void split(Connection conn, String table, String row) throws IOException {
    try (Admin admin = conn.getAdmin()) {
      TableName name = TableName.valueOf(table);
      int before = admin.getRegions(name).size();
      if (row == null) {
        admin.split(name);
      } else {
        admin.split(name, Bytes.toBytesBinary(row));
      }
      System.out.println("regions_before=" + before);
    }
  }
}
