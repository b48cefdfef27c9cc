// HBaseStore: HBase as a widen target, through its Thrift2 gateway
// (`hbase://HOST:PORT`; binary protocol, unframed transport — the gateway's
// defaults). HBase itself applies VERSIONS, MIN_VERSIONS, TTL and delete
// markers; the store creates tables from the same TableDescriptors as the
// embedded store and reads them back in the same order and shape, so
// `widen scan`/`get` print the same for both.
//
// What widen keeps in HBase besides the cells (docs/format.md): the
// descriptor's metadata as the table's METADATA (table descriptor values):
// "widen.key" (the row key layout, for `scan --decode`; "widen.state", the
// load state, only in tables an older widen loaded); and, once a table state
// is first written through
// NewStateStore, the state table (HBaseOptions::state_table): one row per
// target table, its row key the table's full name, one cell s:v holding the
// state value of store/state_store.h.
//
// Writes: a sink buffers cells (BufferedCellSink: sorted, in key order) and
// sends them with putMultiple (deletes with deleteMultiple) in requests of at
// most `request_cells` cells and `request_bytes` bytes, up to `writers`
// requests in flight at once, each writer on its own connection; two
// requests that hold cells of one row (a row wider than a request) are sent
// one after the other, so the cells of a row reach HBase in order. Every
// cell carries its timestamp, so sending a request again gives the same
// table: a request that fails with a retryable error (region moving, server
// busy, a connection the gateway closed after its idle timeout) is sent
// again on a new connection of its writer, with back-off, for up to
// `retry_budget_ms`; the first error of any writer stops the sink (the
// requests not yet sent are dropped) and is returned by its next Put,
// Flush or Close.
//
// Limits checked before anything of a batch is sent (common/cell_check.h;
// InvalidArgument naming the table and row; nothing of the batch is
// written): a row key of 1 to 32,767 bytes; a cell of at most
// `max_cell_bytes` as HBase's region server counts it
// (hbase.server.keyvalue.maxsize: row + family + qualifier + value + 24); a
// timestamp >= 0; a family the table has; a known type.
//
// Durability: a request HBase acknowledged is in its region server's WAL
// (the tables' default durability, SYNC_WAL), so a sink's Sync is its Flush.
//
// Thread safety: a store may be shared by threads (its own requests are
// serialised); each reader has its own connection, each sink its writers'
// connections and threads, and each is used by one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/cell_check.h"
#include "common/cell_sink.h"
#include "common/status.h"
#include "common/table_descriptor.h"
#include "store/state_store.h"
#include "store/store.h"

namespace widen {

namespace hbase_internal {
class HBaseConnection;
}  // namespace hbase_internal

/// HBase's limits and how widen talks to the gateway.
struct HBaseOptions {
  /// Per putMultiple request: at most this many cells ...
  size_t request_cells = kDefaultRequestCells;
  /// ... and this many bytes of row + family + qualifier + value.
  size_t request_bytes = kDefaultRequestBytes;
  /// Requests in flight per sink at most, each on its own connection to the
  /// gateway (1 to kMaxWriters).
  int writers = kDefaultWriters;
  /// The largest cell HBase takes, as its region server counts it (row +
  /// family + qualifier + value + 24): hbase.server.keyvalue.maxsize, and
  /// the gateway's hbase.client.keyvalue.maxsize, both 10 MiB by default.
  /// 0 = no check.
  int64_t max_cell_bytes = kHBaseMaxCellBytes;
  int connect_timeout_ms = 10000;
  /// Per request; the gateway retries region moves for minutes before it
  /// answers, so this is long.
  int rpc_timeout_ms = 300000;
  /// Time spent re-sending one failed request before the error is returned.
  int retry_budget_ms = 120000;
  /// Results (rows, or parts of wide rows) fetched per scanner round trip,
  /// and cells per result at most.
  int scan_rows = 100;
  int scan_cells_per_result = 100;
  /// The table that holds the table states ("ns:table"); created, with one
  /// family "s" of VERSIONS 1, when the first state is written. Left out of
  /// ListTables.
  std::string state_table = "widen:state";
};

class HBaseStore final : public Store {
 public:
  /// Connects to the gateway at `url` (hbase://HOST:PORT) and checks that it
  /// is a Thrift2 gateway. InvalidArgument for a malformed URL; Unavailable
  /// when the gateway cannot be reached or does not speak Thrift2 in binary
  /// protocol without framing.
  static Result<std::unique_ptr<HBaseStore>> Open(const std::string& url,
                                                  const StoreOptions& options,
                                                  const HBaseOptions& hbase = HBaseOptions());

  ~HBaseStore() override;
  HBaseStore(const HBaseStore&) = delete;
  HBaseStore& operator=(const HBaseStore&) = delete;

  /// Creates the namespace when missing, then the table with every family
  /// option, the split points and the metadata as table METADATA. If the
  /// table exists: OK when its families, their options and its metadata
  /// (widen.state aside) are the same, else FailedPrecondition naming the
  /// first difference (split points are not compared). InvalidArgument for
  /// an invalid descriptor or a TTL above 2147483647 s.
  Status CreateTable(const TableDescriptor& descriptor) override;
  /// The table as HBase describes it (getTableDescriptor): families and
  /// options, metadata (every table METADATA value), and as split points the
  /// start keys of its regions now. NotFound if it does not exist.
  Result<TableDescriptor> DescribeTable(const std::string& full_name) override;
  /// Alters the table's METADATA (modifyTable with one value changed).
  Status SetTableMetadata(const std::string& full_name, const std::string& key,
                          const std::string& value) override;
  /// Every user table (not the 'hbase' namespace, not the state table),
  /// ordered by full name.
  Result<std::vector<TableDescriptor>> ListTables() override;
  /// A sink writing to the table (see above); NotFound for an unknown table.
  /// Sync() and Close() flush: HBase keeps what it acknowledged.
  Result<std::unique_ptr<CellSink>> NewSink(const std::string& full_name) override;
  /// A scanner over the table: start_row, stop_row and row_prefix all apply,
  /// max_versions per column (HBase caps it at the family's VERSIONS),
  /// limit_rows rows. HBase applies TTL with its own clock: now_ms is not
  /// used. A scanner that fails mid-way (dropped connection, expired
  /// scanner) is reopened after the last cell returned. NotFound for an
  /// unknown table; InvalidArgument when max_versions < 1.
  Result<std::unique_ptr<CellReader>> NewReader(const std::string& full_name,
                                                const ReadOptions& options) override;

  /// The table states, in the state table (see above), on a connection of
  /// their own. Get and List of a state table that does not exist find no
  /// state; the first Put creates it (and its namespace). Put and Delete are
  /// one checkAndMutate on the table's row, comparing the cell s:v with the
  /// bytes just read; after a lost answer the row is read again to learn
  /// whether the write happened.
  Result<std::unique_ptr<StateStore>> NewStateStore() override;

  /// HBaseOptions::max_cell_bytes.
  int64_t max_cell_bytes() const override { return hbase_.max_cell_bytes; }

  /// "hbase://HOST:PORT".
  const std::string& url() const { return url_; }

 private:
  HBaseStore(std::string url, std::string host, int port, const StoreOptions& options,
             const HBaseOptions& hbase);
  std::unique_ptr<hbase_internal::HBaseConnection> NewConnection() const;
  /// NotFound unless table `name` exists. REQUIRES: mu_ held.
  Status CheckExists(const std::string& name);

  const std::string url_;
  const std::string host_;
  const int port_;
  const StoreOptions options_;
  const HBaseOptions hbase_;
  std::mutex mu_;  // guards conn_
  std::unique_ptr<hbase_internal::HBaseConnection> conn_;
};

}  // namespace widen
